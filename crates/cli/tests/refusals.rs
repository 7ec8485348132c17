//! What `lantern build` refuses before it writes anything, driven as a site owner runs it.

mod common;
use common::{build, built_site, lantern};

#[test]
fn a_base_url_that_would_run_script_is_refused_and_nothing_is_written() {
    let site = built_site(&[("index.html", "Home")]);
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
    let site = built_site(&[("index.html", "Home")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("mine.txt"), "the owner's").unwrap();
    std::os::unix::fs::symlink(outside.path(), site.path().join("lantern")).unwrap();
    let out = build(site.path(), &[]);
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

#[cfg(unix)]
#[test]
fn output_cut_short_by_its_reader_is_not_an_error() {
    // `lantern query ... | head -1`: the pipe closes early; no "error: Broken pipe".
    use std::io::Read;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let bundle = tempfile::tempdir().unwrap();
    let docs = tempfile::tempdir().unwrap();
    for i in 0..400 {
        std::fs::write(
            docs.path().join(format!("p{i}.md")),
            format!(
                "# Page {i}\n\nAbout lanterns and their wicks, part {i}. {}\n",
                "Oil and glass and light. ".repeat(20)
            ),
        )
        .unwrap();
    }
    let out = bundle.path().join("b.lantern");
    let built = lantern()
        .arg("build")
        .arg(docs.path())
        .arg("--out")
        .arg(&out)
        .args(["--quiet", "--no-cache"])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut child = lantern()
        .current_dir(root)
        .args(["query"])
        .arg(&out)
        .args(["lanterns wicks", "-k", "400", "--mode", "keyword"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then hang up.
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(status.success(), "{status:?}: {stderr}");
}

#[test]
fn a_folder_named_lantern_that_lantern_did_not_write_is_left_alone() {
    // A blog post with the slug "lantern": the build refuses, and the post is still there.
    let site = built_site(&[("index.html", "Home")]);
    std::fs::create_dir(site.path().join("lantern")).unwrap();
    let post = site.path().join("lantern/index.html");
    std::fs::write(&post, "<h1>Why I love lanterns</h1>").unwrap();
    let out = build(site.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("did not write") && stderr.contains("lantern/index.html"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&post).unwrap(),
        "<h1>Why I love lanterns</h1>"
    );
    let left: Vec<_> = std::fs::read_dir(site.path().join("lantern"))
        .unwrap()
        .collect();
    assert_eq!(left.len(), 1, "nothing written beside it");
}
