//! SHA-256 of bytes or of a file (streamed), as lowercase hex: the hashes `collect msprof` and
//! `collect memory` record. RustCrypto's `sha2` does the hashing (it replaced a hand-written
//! FIPS 180-4 implementation; the standard test vectors below still hold).

use sha2::{Digest, Sha256};

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn hex_of(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

pub fn file_hex(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut s = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&s.finalize()));
        }
        s.update(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fips_vectors() {
        assert_eq!(
            super::hex_of(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            super::hex_of(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            super::hex_of(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            super::hex_of(&vec![b'a'; 1_000_000]),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }
}
