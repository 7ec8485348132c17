//! Bundles whose checksum is valid but whose structure is not: made from the engine's own types
//! with inconsistent fields, then read and searched in every mode. Each must be refused or
//! searched without a panic. Bounded: a fixed number of seeded cases.

use crate::bundle::Bundle;
use crate::results::Mode;
use crate::search::Engine;
use crate::writer::BundleWriter;
use crate::ModelInfo;

const DIM: usize = 8;

fn unit(seed: u64) -> Vec<f32> {
    crate::vector::unit(seed, DIM)
}

fn good() -> Bundle {
    let mut w = BundleWriter::new(ModelInfo::new("toy", &"0".repeat(64), DIM as u32, 64), 0.3);
    for p in 0..6u64 {
        let page = w.add_page(
            &format!("/p{p}.html"),
            &format!("Page {p}"),
            &format!("p{p}.md"),
            crate::Lang::English,
        );
        for c in 0..8u64 {
            w.add_chunk(
                page,
                vec![format!("Page {p}"), format!("Section {c}")],
                &format!("s{c}"),
                &format!(
                    "cache builds widgets number{c} topic{p} configuration {}",
                    p * c
                ),
            );
        }
    }
    let mut b = w.finish((0..48).map(unit).collect()).unwrap();
    // Small bundles keep one partition; give this one the partitions large bundles get.
    let mut vecs: Vec<Vec<f32>> = (0..48).map(unit).collect();
    vecs[47] = vecs[46].clone(); // and identical sections
    b.vectors = crate::vector::VectorIndex::with_partitions(&vecs, DIM, 6);
    b.vectors.set_probe(2);
    b.meta.vector_parts = b.vectors.partition_count() as u32;
    b.meta.vector_probe = 2;
    b
}

fn flat() -> Bundle {
    let mut b = good();
    b.vectors = crate::vector::VectorIndex::build(&(0..48).map(unit).collect::<Vec<_>>(), DIM);
    b.meta.vector_parts = 1;
    b.meta.vector_probe = 1;
    b
}

/// Edits vector partition `p`'s chunk list and vectors.
fn edit_part(b: &mut Bundle, p: usize, f: impl FnOnce(&mut Vec<u32>, &mut Vec<i8>)) {
    let part = b.vectors.partition_mut(p).expect("partition");
    f(&mut part.chunks, &mut part.vectors);
}

/// Encodes (the checksum is made valid by `to_bytes`), reads back and searches every mode.
fn read_and_search(b: &Bundle) -> bool {
    let Ok(bytes) = b.to_bytes() else {
        return false;
    };
    match Bundle::from_bytes(&bytes) {
        Err(_) => false,
        Ok(b) => {
            let e = Engine::new(b);
            let q = unit(7);
            let _ = e.bundle().vectors().search_exact(&q, 10);
            for mode in Mode::ALL {
                for text in [
                    "cache",
                    "\"cache builds\"",
                    "configuraton",
                    "wid",
                    "number3 topic2",
                ] {
                    let _ = e.search(text, Some(&q), mode, 10);
                }
            }
            true
        }
    }
}

/// A seeded xorshift64 stream: the same cases on every run.
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

type Damage = fn(&mut Bundle);

/// Each of these is inconsistent and must be refused.
const DAMAGES: &[(&str, Damage)] = &[
    ("posting past the chunk count", |b| {
        let l = b.lexical.shards[0].as_mut().unwrap();
        l.postings[0] = vec![0x80 | 0x7f, 0x7f, 1, 1]; // chunk 16383
    }),
    ("fewer postings lists than terms", |b| {
        b.lexical.shards[0].as_mut().unwrap().postings.pop();
    }),
    ("terms out of order", |b| {
        b.lexical.shards[0].as_mut().unwrap().terms.swap(0, 1);
    }),
    ("term blocks not starting at term 0", |b| {
        b.meta.term_blocks[0].1 = 3;
    }),
    ("page sizes not adding up to the chunk count", |b| {
        b.meta.page_chunks[0] += 1;
    }),
    ("text block sizes not adding up to the chunk count", |b| {
        b.meta.text_blocks[0] += 1;
    }),
    ("an empty text block", |b| {
        b.meta.text_blocks.push(0);
    }),
    ("chunk of a missing page", |b| {
        b.chunks[5].page = 99;
    }),
    ("a partition chunk past the chunk count", |b| {
        edit_part(b, 0, |c, _| *c.last_mut().unwrap() = 4000);
    }),
    ("a partition's chunks out of order", |b| {
        edit_part(b, 0, |c, _| c.reverse());
    }),
    ("a partition one vector short", |b| {
        edit_part(b, 1, |_, v| v.truncate(v.len() - DIM));
    }),
    ("a chunk in two partitions", |b| {
        let first = b.vectors.partition_mut(0).unwrap().chunks[0];
        edit_part(b, 1, |c, v| {
            c.push(first);
            c.sort_unstable();
            v.extend([0; DIM]);
        });
    }),
    ("a chunk in no partition", |b| {
        edit_part(b, 0, |c, v| {
            c.pop();
            v.truncate(v.len() - DIM);
        });
    }),
    ("centroids of the wrong size", |b| {
        b.vectors.centroids_mut().unwrap().coords.push(1);
    }),
    ("more probes than partitions", |b| {
        b.meta.vector_probe = 99;
    }),
    ("term count differs from the header", |b| {
        b.header.terms += 1;
    }),
    ("a flat index missing a vector", |b| {
        *b = flat();
        edit_part(b, 0, |c, v| {
            c.pop();
            v.truncate(v.len() - DIM);
        });
    }),
    ("a flat vector of the wrong length", |b| {
        *b = flat();
        edit_part(b, 0, |_, v| v.push(1));
    }),
];

#[test]
fn every_known_inconsistency_is_refused() {
    assert!(read_and_search(&good()), "the undamaged bundle reads");
    assert!(read_and_search(&flat()), "the undamaged flat bundle reads");
    for (name, damage) in DAMAGES {
        let mut b = good();
        damage(&mut b);
        assert!(!read_and_search(&b), "{name}: accepted");
    }
}

#[test]
fn random_structural_damage_never_panics() {
    let mut next = xorshift(0x1234_5678_9abc_def1);
    let mut read = 0;
    for _ in 0..300 {
        let mut b = good();
        for _ in 0..(1 + next() % 3) {
            let r = next();
            let l = b.lexical.shards[0].as_mut().unwrap();
            match r % 8 {
                0 => {
                    let i = (r >> 8) as usize % l.postings.len();
                    let list = &mut l.postings[i];
                    if !list.is_empty() {
                        let j = (r >> 24) as usize % list.len();
                        list[j] = (r >> 40) as u8;
                    }
                }
                1 => {
                    let i = (r >> 8) as usize % l.terms.len();
                    l.terms[i] = format!("t{}", r >> 50);
                }
                2 => {
                    let i = (r >> 8) as usize % b.meta.page_chunks.len();
                    b.meta.page_chunks[i] = (r >> 32) as u32 % 12;
                }
                3 => {
                    let i = (r >> 8) as usize % b.chunks.len();
                    b.chunks[i].page = (r >> 40) as u32 % 10;
                }
                4 => {
                    let p = (r >> 8) as usize % b.vectors.partition_count();
                    edit_part(&mut b, p, |c, _| {
                        let i = (r >> 24) as usize % c.len();
                        c[i] = (r >> 40) as u32 % 64;
                    });
                }
                5 => {
                    let p = (r >> 8) as usize % b.vectors.partition_count();
                    edit_part(&mut b, p, |_, v| {
                        let i = (r >> 24) as usize % v.len();
                        v[i] = (r >> 40) as i8;
                    });
                }
                6 => {
                    let c = &mut b.vectors.centroids_mut().unwrap().coords;
                    let i = (r >> 8) as usize % c.len();
                    c[i] = (r >> 40) as i8;
                }
                _ => {
                    let i = (r >> 8) as usize % b.chunks.len();
                    b.chunks[i].text = "x".repeat((r >> 40) as usize % 300);
                }
            }
        }
        read += read_and_search(&b) as usize;
    }
    // Some damage is harmless (a changed text, a changed length); the rest is refused.
    assert!(read > 0 && read < 300, "{read} of 300 read");
}

/// Random bytes in a split bundle's meta file (header and meta, checksum made valid again),
/// then every shard offered to what was read: each must be refused or read, never a panic or
/// an allocation sized by a forged count. Bounded: `LANTERN_FUZZ_CASES` cases (default 3,000).
#[test]
fn mutated_meta_files_are_refused_or_read() {
    let split = good().to_split().unwrap();
    let cases: usize = std::env::var("LANTERN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    const PREFIX: usize = 28;
    let (mut read, mut refused) = (0, 0);
    for _ in 0..cases {
        let mut bytes = split.meta.clone();
        let body = bytes.len() - PREFIX;
        for _ in 0..(1 + next() % 4) {
            let r = next();
            let at = PREFIX + (r >> 8) as usize % body;
            match r % 4 {
                // A byte anywhere; a varint's continuation bit (longer lengths and counts).
                0 => bytes[at] = (r >> 32) as u8,
                1 => bytes[at] |= 0x80,
                2 => bytes[at] ^= 1 << ((r >> 40) % 8),
                // A count at its largest: four bytes of 0xff where a u32 or a varint sits.
                _ => {
                    for b in bytes.iter_mut().skip(at).take(4) {
                        *b = 0xff;
                    }
                }
            }
        }
        let crc = crate::checksum::crc32(&bytes[PREFIX..]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        match Bundle::from_bytes(&bytes) {
            Err(_) => refused += 1,
            Ok(mut b) => {
                read += 1;
                assert!(b.header().chunks <= crate::bundle::MAX_CHUNKS);
                for (name, shard) in &split.shards {
                    let _ = b.add_shard(name, shard);
                }
                if b.is_complete() {
                    let e = Engine::new(b);
                    for mode in Mode::ALL {
                        let _ = e.search("cache widgets", Some(&unit(3)), mode, 5);
                    }
                }
            }
        }
    }
    assert!(
        refused > 0 && read + refused == cases,
        "{read} read, {refused} refused"
    );
}
