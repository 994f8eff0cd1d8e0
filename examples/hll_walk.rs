//! Instructions of one HyperLogLog add + count, under callgrind
//! (`tests/callgrind-hll.sh`): `hll_walk one|two SIZE ADDS` builds a sparse
//! HyperLogLog of SIZE distinct elements, then runs ADDS adds of new
//! elements, each on a fresh copy of it, counting after each as HOT.VIEW
//! does: `one` with the one-walk `hll::add_counted`, `two` with `hll::add`
//! then `hll::count`/`hll::estimate_of` (a second walk of the body, as
//! before the one-walk add). Prints the checksum of the counts so the work
//! is not optimised away.
use hotrank::hot::hll;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("one", String::as_str);
    let size: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let adds: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let max = hll::DEFAULT_SPARSE_MAX_BYTES;
    let mut base = hll::create();
    for i in 0..size {
        hll::add(&mut base, format!("v{i}").as_bytes(), max).expect("add");
    }
    hll::count(&mut base).expect("count");
    assert_eq!(base[4], 1, "still sparse");
    let mut sum = 0u64;
    let mut v = base.clone();
    for i in 0..adds {
        v.clear();
        v.extend_from_slice(&base);
        let e = (size + i).to_le_bytes();
        sum = sum.wrapping_add(match mode {
            "one" => hll::add_counted(&mut v, &e, max).expect("add").count,
            _ => {
                hll::add(&mut v, &e, max).expect("add");
                if hll::worth_caching(&v) {
                    hll::count(&mut v).expect("count").0
                } else {
                    hll::estimate_of(&v).expect("count")
                }
            }
        });
    }
    println!(
        "{mode} size={size} bytes={} adds={adds} checksum={sum}",
        base.len()
    );
}
