//! Shared test fixtures: the real model, loaded once per test binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lantern_embedder::{Embedder, Model};
use lantern_indexer::{build, BuildOptions, BuildReport, Config};

/// The prepared model in the repository (`bash models/fetch.sh`).
pub fn model_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/minilm")
}

pub struct Loaded {
    pub model: Model,
    pub embedder: Embedder,
}

pub fn model() -> &'static Loaded {
    static M: OnceLock<Loaded> = OnceLock::new();
    M.get_or_init(|| {
        let model = Model::open(&model_dir())
            .expect("the prepared model (run `bash models/fetch.sh` first)");
        let embedder = model.embedder().expect("embedder");
        Loaded { model, embedder }
    })
}

pub fn write(dir: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

pub fn build_dir(docs: &Path, out: &Path, cache: Option<PathBuf>) -> anyhow::Result<BuildReport> {
    let m = model();
    build(
        &BuildOptions {
            docs: docs.to_path_buf(),
            out: out.to_path_buf(),
            config: Config::default(),
            cache,
            progress: false,
            whole_file: true,
            part: None,
            cache_from: Vec::new(),
        },
        &m.model,
        &m.embedder,
    )
}

/// A small docs folder about an imaginary tool.
pub fn sample_docs(dir: &Path) {
    write(dir, "index.md", "# Widgetry\n\nWidgetry renders widgets on any screen.\n\n## Installing\n\nRun `cargo install widgetry` to install the command.\n\n## Upgrading\n\nUse the same command with `--force` to upgrade.\n");
    write(dir, "guide/colors.md", "---\ntitle: Colors\n---\n\n## Palettes\n\nA palette is a list of colors used by a theme.\n\n## Contrast\n\nText must keep a contrast ratio of at least 4.5 against its background.\n");
    write(dir, "guide/errors.md", "# Errors\n\n## E042 widget not found\n\nThe widget id does not exist in the registry. Check the spelling.\n");
}
