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

#[cfg(unix)]
#[test]
fn a_publish_folder_that_links_elsewhere_and_the_root_are_refused() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(
        site.path().join("index.html"),
        "<html><body><h1>Home</h1><p>A page.</p></body></html>",
    )
    .unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("mine.txt"), "the owner's").unwrap();
    std::os::unix::fs::symlink(outside.path(), site.path().join("lantern")).unwrap();
    let out = lantern()
        .arg("build")
        .arg(site.path())
        .args(["--quiet", "--no-cache"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("symbolic link"), "{stderr}");
    let outside_files: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert_eq!(
        outside_files.len(),
        1,
        "nothing written or deleted through the link"
    );
    // The file system's root, and the user's home (a mistyped path), are not sites.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("index.html"), "<h1>Mine</h1>").unwrap();
    for root in [std::path::Path::new("/"), home.path()] {
        let out = lantern()
            .arg("build")
            .arg(root)
            .args(["--quiet", "--no-cache"])
            .env("HOME", home.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{} accepted", root.display());
        assert!(stderr.contains("not a built site"), "{stderr}");
    }
    assert!(!home.path().join("lantern").exists());
}
