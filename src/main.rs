//! The `profscope` binary: a thin shim over [`profscope::cli::main`], which owns exit codes.

fn main() -> std::process::ExitCode {
    profscope::cli::main()
}
