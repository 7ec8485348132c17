//! What the CLI's tests share: the real binary, run from the checkout, and a small built site.

use std::process::Command;

/// `lantern` as built by cargo, run in the checkout (where `bash models/fetch.sh` puts the model).
pub fn lantern() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lantern"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

/// A built site of one page per `(file, heading)`.
pub fn built_site(pages: &[(&str, &str)]) -> tempfile::TempDir {
    let site = tempfile::tempdir().unwrap();
    for (file, heading) in pages {
        std::fs::write(
            site.path().join(file),
            format!("<html><body><h1>{heading}</h1><p>About {heading}.</p></body></html>"),
        )
        .unwrap();
    }
    site
}

/// Runs `lantern build DIR --quiet --no-cache` with `extra` flags; its output.
pub fn build(dir: &std::path::Path, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    lantern()
        .arg("build")
        .arg(dir)
        .args(extra)
        .args(["--quiet", "--no-cache"])
        .output()
        .unwrap()
}
