//! Connection secrets at rest (SPEC §8): XChaCha20-Poly1305 from RustCrypto's
//! `chacha20poly1305` crate (a well-kept AEAD; the 24-byte random nonce makes random
//! nonces safe for any number of secrets). Stored form: base64 of `nonce || ciphertext`.
//!
//! The 32-byte key comes from `GRAFT_SECRET_KEY` (64 hex digits), or from a key file:
//! `GRAFT_SECRET_KEY_FILE` (kept outside the data directory, so that a copy of the data
//! directory opens no secret: security review 32.6), else `secret.key` in the data
//! directory; a missing key file is created with mode 0600.

use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use std::path::Path;

/// Associated data bound to every ciphertext (a secret only decrypts as a Graft secret).
const AAD: &[u8] = b"graft connection secret v1";

/// The key that seals connection secrets. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct SecretKey([u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

impl SecretKey {
    /// A key from 64 hex digits. Errors: anything else.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let bytes = hex::decode(text.trim())
            .map_err(|_| "GRAFT_SECRET_KEY must be 64 hex digits (32 bytes)".to_string())?;
        let arr: [u8; 32] = bytes
            .try_into()
            .map_err(|_| "GRAFT_SECRET_KEY must be 64 hex digits (32 bytes)".to_string())?;
        Ok(Self(arr))
    }

    /// A fresh random key.
    pub fn generate() -> Self {
        Self(XChaCha20Poly1305::generate_key(&mut OsRng).into())
    }

    /// The key from `env_value` (GRAFT_SECRET_KEY) when set, else from `key_file`
    /// (GRAFT_SECRET_KEY_FILE) when given, else from `<data_dir>/secret.key`; a missing
    /// key file is created (mode 0600).
    /// Errors: a malformed key, or the key file cannot be read or written.
    pub fn load_or_create(
        env_value: Option<&str>,
        key_file: Option<&Path>,
        data_dir: &Path,
    ) -> Result<Self, String> {
        if let Some(v) = env_value.filter(|v| !v.trim().is_empty()) {
            return Self::from_hex(v);
        }
        let path = key_file
            .map(Path::to_path_buf)
            .unwrap_or_else(|| data_dir.join("secret.key"));
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::from_hex(&text)
                .map_err(|_| format!("{} is not a 64-hex-digit key", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = Self::generate();
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                }
                key.write_new(&path)?;
                Ok(key)
            }
            Err(e) => Err(format!("cannot read key file {}: {e}", path.display())),
        }
    }

    /// Writes the key as a new file at `path` (mode 0600, flushed to disk). Errors: the
    /// file exists or cannot be written.
    pub fn write_new(&self, path: &Path) -> Result<(), String> {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        use std::io::Write;
        let mut f = opts
            .open(path)
            .map_err(|e| format!("cannot create key file {}: {e}", path.display()))?;
        f.write_all(hex::encode(self.0).as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The key as 64 hex digits (to print once, when it came from `GRAFT_SECRET_KEY`).
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Seals a secret; returns base64 of `nonce || ciphertext`.
    pub fn seal(&self, plaintext: &str) -> String {
        let cipher = XChaCha20Poly1305::new((&self.0).into());
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let ct = cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: AAD,
                },
            )
            .expect("encryption cannot fail");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ct);
        base64::engine::general_purpose::STANDARD.encode(out)
    }

    /// Opens a sealed secret. Errors: wrong key or tampered text (never the plaintext).
    pub fn open(&self, sealed: &str) -> Result<String, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(sealed)
            .map_err(|_| "sealed secret is not base64".to_string())?;
        if bytes.len() < 24 + 16 {
            return Err("sealed secret is too short".into());
        }
        let (nonce, ct) = bytes.split_at(24);
        let cipher = XChaCha20Poly1305::new((&self.0).into());
        let pt = cipher
            .decrypt(XNonce::from_slice(nonce), Payload { msg: ct, aad: AAD })
            .map_err(|_| "cannot decrypt a connection secret: is GRAFT_SECRET_KEY (or secret.key) the one it was sealed with?".to_string())?;
        String::from_utf8(pt).map_err(|_| "sealed secret is not UTF-8".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_open_round_trip_and_tamper_detection() {
        let k = SecretKey::generate();
        let sealed = k.seal("sk_live_123");
        assert!(!sealed.contains("sk_live_123"));
        assert_eq!(k.open(&sealed).unwrap(), "sk_live_123");
        assert_ne!(k.seal("sk_live_123"), sealed, "random nonces");
        assert!(SecretKey::generate().open(&sealed).is_err());
        let mut bytes = base64::engine::general_purpose::STANDARD
            .decode(&sealed)
            .unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(k
            .open(&base64::engine::general_purpose::STANDARD.encode(bytes))
            .is_err());
        assert!(format!("{k:?}").contains("redacted"));
    }

    #[test]
    fn key_file_is_created_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = SecretKey::load_or_create(None, None, dir.path()).unwrap();
        let b = SecretKey::load_or_create(None, None, dir.path()).unwrap();
        assert_eq!(a.0, b.0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("secret.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // a key file outside the data directory: created there, never beside the data
        let elsewhere = tempfile::tempdir().unwrap();
        let path = elsewhere.path().join("keys/graft.key");
        let c = SecretKey::load_or_create(None, Some(&path), dir.path()).unwrap();
        assert!(path.is_file() && c.0 != a.0);
        assert_eq!(
            SecretKey::load_or_create(None, Some(&path), dir.path())
                .unwrap()
                .0,
            c.0
        );
        assert!(SecretKey::load_or_create(Some("abc"), None, dir.path()).is_err());
        let hex64 = "11".repeat(32);
        assert_eq!(
            SecretKey::load_or_create(Some(&hex64), None, dir.path())
                .unwrap()
                .0,
            [0x11; 32]
        );
    }
}
