//! What `lantern build` refuses before it writes anything, driven as a site owner runs it.

use std::process::Command;

fn lantern() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lantern"));
    // The checkout, where the model is (as `bash models/fetch.sh` puts it).
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

#[test]
fn a_base_url_that_would_run_script_is_refused_and_nothing_is_written() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(
        site.path().join("index.html"),
        "<html><body><h1>Home</h1><p>A page.</p></body></html>",
    )
    .unwrap();
    for base in [
        "javascript:alert(1)//",
        " javascript:alert(1)",
        "data:text/html,x",
    ] {
        let out = lantern()
            .arg("build")
            .arg(site.path())
            .args(["--base-url", base, "--quiet", "--no-cache"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{base:?} accepted");
        assert!(stderr.contains("base_url must be a path"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            !site.path().join("lantern").exists(),
            "{base:?}: nothing published"
        );
    }
}
