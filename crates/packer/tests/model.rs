//! The real model: preparation keeps outputs bit-identical, and the embedder agrees with an
//! independent reference (onnxruntime + Python tokenizers; see models/reference_vectors.py).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lantern_embedder::{sha256_hex, Embedder, Manifest, Model};
use lantern_packer::{prepare_onnx, OnnxEmbedder};
use tract_onnx::prelude::*;

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

struct Loaded {
    model: Model,
    /// The packed model: what Lantern runs.
    embedder: Embedder,
    /// The ONNX model run by tract: the reference the packed model is checked against.
    reference: OnnxEmbedder,
    onnx: Vec<u8>,
}

fn onnx() -> &'static [u8] {
    &loaded().onnx
}

fn loaded() -> &'static Loaded {
    static M: OnceLock<Loaded> = OnceLock::new();
    M.get_or_init(|| {
        let model = Model::open(&models().join("minilm"))
            .expect("the prepared model (run `bash models/fetch.sh` first)");
        let embedder = model.embedder().expect("embedder");
        let onnx = std::fs::read(models().join("minilm").join(&model.manifest.files.model))
            .expect("the prepared ONNX file (run `bash models/fetch.sh` first)");
        let reference = OnnxEmbedder::new(&model.manifest, &onnx, &model.tokenizer).expect("tract");
        Loaded {
            model,
            embedder,
            reference,
            onnx,
        }
    })
}

fn run(onnx: &[u8], ids: &[i64]) -> Vec<f32> {
    let mut model = tract_onnx::onnx()
        // The file's value_info names a symbolic batch; Lantern always runs batch 1.
        .with_ignore_value_info(true)
        .model_for_read(&mut std::io::Cursor::new(onnx))
        .unwrap();
    let n = ids.len();
    for i in 0..3 {
        model
            .set_input_fact(i, InferenceFact::dt_shape(i64::datum_type(), tvec!(1, n)))
            .unwrap();
    }
    let plan = model.into_optimized().unwrap().into_runnable().unwrap();
    let t = |v: Vec<i64>| -> TValue {
        tract_ndarray::Array2::from_shape_vec((1, n), v)
            .unwrap()
            .into_tensor()
            .into()
    };
    let out = plan
        .run(tvec!(t(ids.to_vec()), t(vec![1; n]), t(vec![0; n])))
        .unwrap();
    out[0]
        .to_plain_array_view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect()
}

#[test]
fn prepared_model_is_bit_identical_to_the_original() {
    let dir = models().join("cache");
    let original = std::fs::read(dir.join("model.int8.onnx"))
        .expect("models/cache/model.int8.onnx (run `bash models/fetch.sh`)");
    let (prepared, rewritten) = prepare_onnx(&original).unwrap();
    assert_eq!(rewritten, 2, "word and position embedding tables");
    assert_eq!(
        sha256_hex(&prepared),
        loaded().model.manifest.sha256,
        "preparation is deterministic and pinned"
    );
    for ids in [
        vec![101i64, 7592, 2088, 102],
        vec![
            101, 2129, 2079, 1045, 16500, 1996, 3094, 1029, 30521, 0, 102,
        ],
    ] {
        let a = run(&original, &ids);
        let b = run(&prepared, &ids);
        assert_eq!(a.len(), ids.len() * 384);
        let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "outputs differ for {ids:?}");
    }
}

#[test]
fn embedder_matches_the_reference_vectors() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/reference_vectors.json")).unwrap();
    let e = &loaded().embedder;
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 5);
    let mut packed_sum = 0.0;
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(e.token_ids(text).unwrap(), ids, "token ids for {text:?}");
        let want: Vec<f32> = case["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        // tract's run of the ONNX model agrees with onnxruntime's; the pack stays close.
        let cosine = |got: &[f32]| want.iter().zip(got).map(|(a, b)| a * b).sum::<f32>();
        let reference = cosine(&loaded().reference.embed(text).unwrap());
        assert!(reference >= 0.999, "cosine {reference} for {text:?}");
        let packed = cosine(&e.embed(text).unwrap());
        assert!(packed >= 0.8, "packed: cosine {packed} for {text:?}");
        packed_sum += packed;
    }
    let mean = packed_sum / cases.len() as f32;
    assert!(mean >= 0.93, "packed: mean cosine {mean}");
}

#[test]
fn embeddings_are_unit_length_and_meaningful() {
    let e = &loaded().embedder;
    let q = e.embed("how do I install the tool").unwrap();
    let near = e
        .embed("Installation: run the installer to set up the command")
        .unwrap();
    let far = e
        .embed("The cat slept on a warm windowsill all afternoon")
        .unwrap();
    let norm: f32 = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!(dot(&q, &near) > dot(&q, &far) + 0.2);
}

#[test]
fn texts_embedded_together_are_the_same_bits_as_alone() {
    // Batches of texts of every length, a truncated one and a one-word one among them.
    let e = &loaded().embedder;
    let long = "word ".repeat(400);
    let texts = [
        "how do I install the tool",
        "x",
        long.as_str(),
        "Installation: run the installer to set up the command, then restart the shell.",
        "The cat slept on a warm windowsill all afternoon",
    ];
    let together = e.embed_many(&texts).unwrap();
    assert_eq!(together.len(), texts.len());
    for (text, v) in texts.iter().zip(&together) {
        let alone = e.embed(text).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(v), bits(&alone), "{text:?}");
    }
    assert!(e.embed_many(&[]).unwrap().is_empty());
}

#[test]
fn long_text_is_truncated_at_the_model_limit() {
    let e = &loaded().embedder;
    let long = "word ".repeat(1000);
    assert_eq!(e.token_ids(&long).unwrap().len(), 256);
    assert!(e.count_tokens(&long).unwrap() > 1000);
    assert!(e.embed(&long).is_ok());
}

#[test]
fn the_contract_comes_from_the_manifest() {
    let m = &loaded().model;
    // The committed manifest states the model's facts; the embedder follows them.
    assert_eq!(loaded().embedder.dim(), m.manifest.dimensions);
    assert_eq!(loaded().embedder.max_tokens(), m.manifest.max_tokens);
    // A manifest that claims other dimensions is caught by the probe at load time.
    let lying = Manifest {
        dimensions: 512,
        ..m.manifest.clone()
    };
    let e = OnnxEmbedder::new(&lying, onnx(), &m.tokenizer)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("dimensions"), "{e}");
    // Files that do not match the pinned sums are refused before tract sees them.
    let mut other = onnx().to_vec();
    other[100] ^= 1;
    let e = OnnxEmbedder::new(&m.manifest, &other, &m.tokenizer)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("sha256"), "{e}");
}

#[test]
fn the_packed_model_is_pinned_close_to_the_model_and_far_smaller() {
    let m = &loaded().model;
    let entry = m
        .manifest
        .packed
        .as_ref()
        .expect("the manifest names a packed model");
    let bytes = m.packed_bytes().to_vec();
    // Packing is deterministic: the prepared model packs to the pinned file.
    let again =
        lantern_packer::pack(onnx(), &m.tokenizer, entry.spec, m.manifest.max_tokens).unwrap();
    assert_eq!(sha256_hex(&again), entry.sha256);
    // Under two thirds of the two files it stands for (the tokenizer travels in it): 5 bits a
    // layer weight and 4 a word-table value, against the ONNX file's 8.
    assert!(
        bytes.len() * 3 < (onnx().len() + m.tokenizer.len()) * 2,
        "{} bytes packed against {} + {}",
        bytes.len(),
        onnx().len(),
        m.tokenizer.len()
    );
    let packed = m.embedder().unwrap();
    let full = &loaded().reference;
    let texts = [
        "How do I install Lantern?",
        "The builder cuts each page into heading-aware chunks.",
        "can I look things up without an internet connection",
        "fn main() { println!(\"hello\"); }",
    ];
    for t in texts {
        let (a, b) = (packed.embed(t).unwrap(), full.embed(t).unwrap());
        let cos: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!(cos > 0.93 && cos < 0.9999, "{t}: cosine {cos}");
    }
    // Meaning survives: a paraphrase is nearer its sentence than an unrelated one.
    let v = |t: &str| packed.embed(t).unwrap();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let q = v("search without a network");
    assert!(
        dot(&q, &v("Lantern works offline once visited")) > dot(&q, &v("Colors of the dark theme"))
    );
}

#[test]
fn position_rows_past_the_token_limit_are_left_out_of_the_pack_exactly() {
    let m = &loaded().model;
    let entry = m.manifest.packed.as_ref().unwrap();
    let trimmed = m.packed_bytes().to_vec();
    // With a limit as long as the table, nothing can be left out.
    let whole = lantern_packer::pack(onnx(), &m.tokenizer, entry.spec, 512).unwrap();
    // 256 rows of 384 values at 3 bits, their scales and position ids.
    assert!(
        trimmed.len() + 40_000 < whole.len(),
        "{} bytes against {}",
        trimmed.len(),
        whole.len()
    );
    let mut other = m.manifest.clone();
    other.packed.as_mut().unwrap().sha256 = sha256_hex(&whole);
    let whole = Embedder::from_packed(&other, &whole).unwrap();
    let trimmed = m.embedder().unwrap();
    // Up to the limit and past it (truncated): the same vectors, bit for bit.
    let long = "every section is cut at its headings and embedded ".repeat(40);
    assert!(trimmed.count_tokens(&long).unwrap() > m.manifest.max_tokens);
    for t in ["offline search", long.as_str()] {
        assert_eq!(trimmed.embed(t).unwrap(), whole.embed(t).unwrap());
    }
}

#[test]
fn damaged_or_foreign_packed_models_are_refused() {
    let m = &loaded().model;
    let entry = m.manifest.packed.as_ref().unwrap();
    let bytes = m.packed_bytes().to_vec();
    let err = |b: &[u8]| match lantern_embedder::read_packed(b) {
        Ok(_) => panic!("read"),
        Err(e) => e.to_string(),
    };
    assert!(err(&bytes[..bytes.len() / 2]).contains("truncated"));
    assert!(err(b"not a model at all").contains("not a Lantern packed model"));
    assert!(err(onnx()).contains("not a Lantern packed model"));
    let mut future = bytes.clone();
    future[8] = 99;
    assert!(err(&future).contains("format 99"));
    // Flipped bytes in the middle: refused by the manifest's sha256 before decoding.
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0xff;
    let e = Embedder::from_packed(&m.manifest, &flipped)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("sha256"), "{e}");
    // A sum computed by the caller (the browser's SHA-256) is checked the same way.
    let e = Embedder::from_packed_hashed(&m.manifest, &bytes, &"0".repeat(64))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("sha256"), "{e}");
    // Packing something without int8 weights is a clear error.
    let spec = entry.spec;
    let e = lantern_packer::pack(b"\x00\x01", &m.tokenizer, spec, 256).unwrap_err();
    assert!(
        e.to_string().contains("ONNX") || e.to_string().contains("no int8"),
        "{e}"
    );
}

#[test]
fn a_pack_published_without_its_word_rows_embeds_as_the_whole_pack_once_given_them() {
    let m = &loaded().model;
    let whole = m.packed_bytes().to_vec();
    let (head, files) = lantern_embedder::split_packed(&whole).unwrap();
    // The table was about half of the pack.
    assert!(
        head.len() * 10 < whole.len() * 6,
        "{} of {}",
        head.len(),
        whole.len()
    );
    assert!(files.len() > 100, "{} shards", files.len());
    let mut published = m.manifest.clone();
    published.packed.as_mut().unwrap().sha256 = sha256_hex(&head);
    // Opened, before the slow build, the model already names the rows a question needs and
    // their files (a browser fetches them meanwhile); built, it names the same.
    let text = "can I look things up without an internet connection";
    let opened = Embedder::open_packed(&published, &head, &sha256_hex(&head)).unwrap();
    let early: Vec<_> = opened
        .rows_missing(text)
        .unwrap()
        .into_iter()
        .map(|s| (s, opened.word_rows_file(s).unwrap()))
        .collect();
    let mut browser = opened.build().unwrap();
    let reference = m.embedder().unwrap();
    let missing = browser.rows_missing(text).unwrap();
    let late: Vec<_> = missing
        .iter()
        .map(|&s| (s, browser.word_rows_file(s).unwrap()))
        .collect();
    assert_eq!(early, late);
    assert!(!missing.is_empty() && missing.len() <= 12, "{missing:?}");
    assert!(browser
        .embed(text)
        .unwrap_err()
        .to_string()
        .contains("not loaded"));
    for &s in &missing {
        let name = browser.word_rows_file(s).unwrap();
        let (_, bytes) = files.iter().find(|(n, _)| *n == name).unwrap();
        // A damaged shard is refused by its sha256; the pack's other shards are too.
        let mut damaged = bytes.clone();
        damaged[20] ^= 1;
        assert!(browser.add_word_rows(s, &damaged).is_err());
        browser.add_word_rows(s, bytes).unwrap();
    }
    assert!(browser.rows_missing(text).unwrap().is_empty());
    assert_eq!(browser.embed(text).unwrap(), reference.embed(text).unwrap());
    // The whole pack, as the indexer reads it, needs nothing fetched.
    assert!(reference
        .rows_missing("anything at all")
        .unwrap()
        .is_empty());
}
