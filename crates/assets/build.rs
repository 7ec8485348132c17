//! Embeds the files under `$LANTERN_ASSETS_DIR` (`web/`: the runtime as `site/build.sh`
//! assembles it under `lantern/`; `model/`: the model as a site publishes it) into the crate,
//! as `dist/package.sh` builds the self-contained binary. Without the variable nothing is
//! embedded: a development build reads them from the checkout.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).expect("under the root");
                let rel = rel.to_string_lossy().replace('\\', "/");
                // Servers compress on the fly or the build writes these again.
                if !rel.ends_with(".br") && !rel.ends_with(".gz") {
                    out.push((rel, path));
                }
            }
        }
    }
    out.sort();
    out
}

fn table(name: &str, list: &[(String, PathBuf)]) -> String {
    let mut s = format!("pub(crate) static {name}: &[(&str, &[u8])] = &[\n");
    for (rel, path) in list {
        writeln!(
            s,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    s + "];\n"
}

fn main() {
    println!("cargo:rerun-if-env-changed=LANTERN_ASSETS_DIR");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let mut code = String::new();
    match std::env::var_os("LANTERN_ASSETS_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            println!("cargo:rerun-if-changed={}", dir.display());
            let (web, model) = (files(&dir.join("web")), files(&dir.join("model")));
            assert!(
                web.iter().any(|(r, _)| r == "widget.js"),
                "{}: no web/widget.js",
                dir.display()
            );
            assert!(
                model.iter().any(|(r, _)| r == "manifest.json"),
                "{}: no model/manifest.json",
                dir.display()
            );
            code += &table("WEB", &web);
            code += &table("MODEL", &model);
        }
        None => {
            code += "pub(crate) static WEB: &[(&str, &[u8])] = &[];\n";
            code += "pub(crate) static MODEL: &[(&str, &[u8])] = &[];\n";
        }
    }
    std::fs::write(out.join("assets.rs"), code).expect("writing assets.rs");
}
