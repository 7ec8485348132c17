//! A model folder packed with another spec, for measuring what bits cost in quality:
//!   cargo run --release -p lantern-packer --example pack_variant -- SRC_DIR OUT_DIR BITS TABLE_BITS GROUP
use lantern_embedder::{sha256_hex, Manifest, MANIFEST_FILE};
use lantern_engine::{PackSpec, PackedFile};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (src, out) = (std::path::Path::new(&a[1]), std::path::Path::new(&a[2]));
    let spec = PackSpec {
        bits: a[3].parse().unwrap(),
        table_bits: a[4].parse().unwrap(),
        group: a[5].parse().unwrap(),
    };
    let mut m = Manifest::from_json(&std::fs::read(src.join(MANIFEST_FILE)).unwrap()).unwrap();
    let onnx = std::fs::read(src.join(&m.files.model)).unwrap();
    let tok = std::fs::read(src.join(&m.files.tokenizer)).unwrap();
    let packed = lantern_packer::pack(&onnx, &tok, spec, m.max_tokens).unwrap();
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join(&m.files.model), &onnx).unwrap();
    std::fs::write(out.join(&m.files.tokenizer), &tok).unwrap();
    std::fs::write(out.join("model.pack"), &packed).unwrap();
    m.packed = Some(PackedFile {
        file: "model.pack".into(),
        sha256: sha256_hex(&packed),
        spec,
    });
    std::fs::write(out.join(MANIFEST_FILE), m.to_json()).unwrap();
    println!("{} bytes packed", packed.len());
}
