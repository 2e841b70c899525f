//! docs/tables.md carries the schema declared in src/model/schema.rs, verbatim between its
//! markers. `BLESS=1` rewrites the section.

#[test]
fn tables_doc_matches_schema() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tables.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let (begin, end) = ("<!-- schema:begin -->\n", "<!-- schema:end -->");
    let a = doc.find(begin).expect("begin marker") + begin.len();
    let b = doc.find(end).expect("end marker");
    let want = profscope::model::schema::render_markdown();
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, format!("{}{}{}", &doc[..a], want, &doc[b..])).unwrap();
        return;
    }
    assert_eq!(
        &doc[a..b],
        want,
        "docs/tables.md is stale: BLESS=1 cargo test --release --test it docs::"
    );
}

/// docs/cli.md carries every command's `--help`, verbatim in the `text` block after each
/// `<!-- help: COMMAND -->` marker, so the flags it documents are the binary's. `BLESS=1`
/// rewrites the blocks.
#[test]
fn cli_doc_matches_help() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut want = String::new();
    let mut rest = doc.as_str();
    let mut commands = Vec::new();
    while let Some(at) = rest.find("<!-- help: ") {
        let line_end = at + rest[at..].find('\n').expect("marker line");
        let command = rest[at + "<!-- help: ".len()..line_end]
            .trim_end_matches(" -->")
            .to_string();
        let open = line_end + 1;
        assert!(
            rest[open..].starts_with("```text\n"),
            "{command}: no text block"
        );
        let body = open + "```text\n".len();
        let close = body + rest[body..].find("```\n").expect("block end");
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        let out = crate::common::profscope_command()
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "profscope {command} --help");
        want.push_str(&rest[..body]);
        want.push_str(String::from_utf8(out.stdout).unwrap().trim_end());
        want.push('\n');
        rest = &rest[close..];
        commands.push(command);
    }
    want.push_str(rest);
    // Every subcommand of `profscope --help` (and of `collect --help`) has a block.
    for (parent, prefix) in [
        (vec!["--help"], ""),
        (vec!["collect", "--help"], "collect "),
    ] {
        let out = crate::common::profscope_command()
            .args(&parent)
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let listed = help
            .split("Commands:\n")
            .nth(1)
            .unwrap()
            .split("\n\n")
            .next()
            .unwrap();
        for l in listed.lines() {
            let name = l.split_whitespace().next().unwrap();
            if name != "help" && !(prefix.is_empty() && name == "collect") {
                let c = format!("{prefix}{name}");
                assert!(
                    commands.contains(&c),
                    "docs/cli.md has no help block for {c}"
                );
            }
        }
    }
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, want).unwrap();
        return;
    }
    assert_eq!(
        doc, want,
        "docs/cli.md is stale: BLESS=1 cargo test --release --test it docs::"
    );
}

/// README.md stays a ten-minute read (issue 47): at most 200 lines, no line over 200 characters
/// outside code blocks, and every docs/ page it links exists.
#[test]
fn readme_is_short_and_its_links_resolve() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(readme.lines().count() <= 200, "README.md over 200 lines");
    let mut code = false;
    for (n, l) in readme.lines().enumerate() {
        if l.starts_with("```") {
            code = !code;
        } else if !code {
            assert!(
                l.chars().count() <= 200,
                "README.md line {} has {} characters",
                n + 1,
                l.chars().count()
            );
        }
    }
    let mut links = 0;
    for part in readme.split("](").skip(1) {
        let target = part.split(')').next().unwrap();
        if target.starts_with("docs/") {
            links += 1;
            let p = std::path::Path::new(root).join(target.split('#').next().unwrap());
            assert!(p.exists(), "README.md links to a missing {target}");
        }
    }
    assert!(links >= 10, "{links}");
}

/// Every diagnostic code the source passes to `Diagnostics::add` / `add_n` as a literal has a
/// row in docs/diagnostics.md (the codes are the contract agents read).
#[test]
fn every_diagnostic_code_is_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/diagnostics.md")).unwrap();
    let mut sources = Vec::new();
    crate::layering::rust_files(&root.join("src"), &mut sources);
    let mut codes = std::collections::BTreeSet::new();
    for f in sources {
        let text = std::fs::read_to_string(&f).unwrap();
        for call in [".add(", ".add_n("] {
            for (at, _) in text.match_indices(call) {
                let rest = text[at + call.len()..].trim_start();
                let Some(lit) = rest.strip_prefix('"') else {
                    continue;
                };
                let code = &lit[..lit.find('"').unwrap()];
                // Diagnostic codes are snake_case words; other `add` calls (tests' "x") are not
                // codes of the product.
                if code.len() > 1 && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                    codes.insert(code.to_string());
                }
            }
        }
    }
    assert!(codes.len() > 30, "found only {codes:?}");
    let missing: Vec<&String> = codes
        .iter()
        .filter(|c| !doc.contains(&format!("`{c}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a row in docs/diagnostics.md: {missing:?}"
    );
}
