//! The engine loader: every built-in loads, and each class of bad input is reported at its
//! file, line and field with what was expected.

use super::*;

fn load(text: &str) -> Result<Engine, Error> {
    Engine::load(&Source::from_text("test.yaml", text))
}

fn built_in_text(id: &str) -> &'static str {
    builtin::ENGINES
        .iter()
        .find(|(known, _)| *known == id)
        .map(|(_, text)| *text)
        .unwrap()
}

/// The problems of a file that must not load: `(field, line)` each.
fn problems(text: &str) -> Vec<(String, u64, String)> {
    match load(text) {
        Err(Error::Invalid(d)) => {
            d.0.into_iter()
                .map(|p| (p.field, p.line, p.message))
                .collect()
        }
        other => panic!("expected problems, got {other:?}"),
    }
}

#[test]
fn every_built_in_loads_with_its_stem_as_id() {
    let ids: Vec<&str> = builtin_ids().collect();
    assert!(ids.len() >= 7, "{ids:?}");
    for id in ids {
        let engine = builtin(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(engine.id(), id);
    }
    assert!(builtin("vllm@0.7").is_ok());
    assert!(builtin("vllm-gaudi").is_err());
}

#[test]
fn vllm_reads_as_its_sources_say() {
    let v = builtin("vllm").unwrap();
    let t = v.terms();
    // [1, 2, 4] + range(8, 256, 8) + range(256, 513, 16): 3 + 31 + 17 sizes.
    assert_eq!(t.launches.graph_batch_sizes.len(), 3 + 31 + 17);
    assert_eq!(t.launches.graph_batch_sizes[..4], [1, 2, 4, 8]);
    assert_eq!(t.launches.graph_batch_sizes.last(), Some(&512));
    assert_eq!(t.launches.eager_launch_s, 5e-6);
    assert_eq!(t.limits.block_tokens, 16);
    assert_eq!(t.all_reduce[2].up_to_bytes, Some(256.0 * 1024.0));
    assert_eq!(t.all_reduce[2].algorithm, AllReduceAlgorithm::OneShot);
    assert_eq!(t.all_reduce[4].up_to_bytes, None);
    assert_eq!(v.launch(), LaunchFamily::Vllm);
    let trt = builtin("trtllm").unwrap();
    assert_eq!(trt.terms().admission, Admission::ReserveWhole);
    assert_eq!(trt.terms().host_overlap, 1.0);
    // range(1, 32) + [32, 64, 128]
    assert_eq!(trt.terms().launches.graph_batch_sizes.len(), 34);
}

#[test]
fn an_unknown_field_is_named_with_the_closest() {
    let text = built_in_text("vllm").replace("admission:", "admision:");
    let found = problems(&text);
    assert!(found[0].2.contains("admision"), "{found:?}");
    assert!(found[0].1 > 0);
}

#[test]
fn a_number_out_of_range_names_its_field_and_line() {
    let text = built_in_text("vllm").replace("host_overlap: 0 ", "host_overlap: 1.5 ");
    let found = problems(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "host_overlap");
    assert_eq!(found[0].1, 7); // the line of `host_overlap:`
    assert!(found[0].2.contains("expected"), "{found:?}");
}

#[test]
fn a_unit_in_the_wrong_place_is_refused() {
    // A size where a time belongs, and a time where a size belongs.
    let text = built_in_text("vllm")
        .replace("eager_launch: 5 us", "eager_launch: 5 KB")
        .replace("up_to: 8 MiB", "up_to: 8 ms");
    let found = problems(&text);
    let fields: Vec<&str> = found.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        fields,
        ["graphs.eager_launch", "all_reduce[3].up_to"],
        "{found:?}"
    );
    assert!(found.iter().all(|p| p.1 > 0));
    // A bare number where a quantity with its unit is expected.
    let found = problems(&built_in_text("vllm").replace("eager_launch: 5 us", "eager_launch: 5"));
    assert_eq!(found[0].0, "graphs.eager_launch");
}

#[test]
fn a_name_outside_its_closed_set_lists_the_set() {
    let text = built_in_text("vllm")
        .replace("admission: on-demand", "admission: lazy")
        .replace("fp8: cutlass ", "fp8: cublas ")
        .replace("algorithm: ring", "algorithm: butterfly")
        .replace("launch: vllm ", "launch: ollama ");
    let found = problems(&text);
    let fields: Vec<&str> = found.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        fields,
        [
            "all_reduce[4].algorithm",
            "admission",
            "gemm_paths.fp8",
            "launch"
        ],
        "{found:?}"
    );
    assert!(found[1].2.contains("on-demand"));
    assert!(found[2].2.contains("cublaslt"));
}

#[test]
fn sizes_must_ascend_and_be_whole() {
    let found = problems(&built_in_text("vllm").replace("sizes: 1, 2, 4,", "sizes: 4, 2, 1,"));
    assert_eq!(found[0].0, "graphs.sizes");
    let found = problems(
        &built_in_text("jetstream").replace("prompt_buckets: 16,", "prompt_buckets: 16.5,"),
    );
    assert_eq!(found[0].0, "prompt_buckets");
}

#[test]
fn a_bad_id_is_refused() {
    let err = Engine::load(&Source::from_text("vLLM.yaml", built_in_text("vllm"))).unwrap_err();
    assert!(err.to_string().contains("engine id"), "{err}");
}
