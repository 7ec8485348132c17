//! `lantern build` on a built site, run as the real binary.

mod common;
use common::{build, built_site};

#[test]
fn a_bundle_built_with_out_leaves_out_what_lantern_published_in_the_site() {
    let site = built_site(&[("index.html", "Home"), ("guide.html", "Guide")]);
    // What `lantern build SITE` leaves there: its search page and the snippet among others.
    std::fs::create_dir(site.path().join("lantern")).unwrap();
    for f in ["index.html", "snippet.html"] {
        std::fs::write(
            site.path().join("lantern").join(f),
            "<html><body><h1>Search</h1><p>Search the docs.</p></body></html>",
        )
        .unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let bundle = out.path().join("b.lantern");
    let built = build(site.path(), &["--out".as_ref(), bundle.as_os_str()]);
    let stdout = String::from_utf8_lossy(&built.stdout);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    assert!(
        stdout.contains(": 2 pages"),
        "only the site's own pages: {stdout}"
    );
}
