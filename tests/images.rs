//! Images in a prompt: `--images N` prices a multimodal model's vision encoder (the workload
//! its file links with `vision:`) and adds its tokens to the prompt.

use serde_json::Value;

use crate::common::{assert_close, stepcost, succeeded};

fn json(args: &[&str]) -> Value {
    let out = succeeded(
        stepcost()
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap(),
    );
    serde_json::from_str(&out).unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number `{key}` in {v}"))
}

const SCOUT: [&str; 8] = [
    "run",
    "llama-4-scout",
    "--chip",
    "h200",
    "--set",
    "tp=4",
    "--set",
    "tokens=1024",
];

#[test]
fn llama_4_scout_with_two_images_prices_the_encoder_and_adds_its_tokens() {
    let with = json(&[&SCOUT[..], &["--mode", "roofline", "--images", "2"]].concat());
    let images = &with["vision"];
    // The encoder at tp=4, by hand from the vit template's arithmetic: two 336 x 336 tiles of
    // 576 patches and a class token (n = 1154 positions), 34 layers of hidden 1408, 16 heads
    // of 88, MLP 5632. Tensor parallelism splits q/k/v, RoPE, attention, o_proj, fc1, GELU
    // and fc2 four ways; the LayerNorms, residual adds, patch embedding, adapter and
    // projector run whole on each chip.
    let (tiles, p, h, heads, f, tp) = (2.0, 577.0, 1408.0, 16.0, 5632.0, 4.0);
    let n = tiles * p;
    let embed = 2.0 * tiles * 576.0 * 588.0 * h + n * h + 7.0 * n * h;
    let attention = 2.0 * 2.0 * tiles * heads * p * p * 88.0 + 5.0 * tiles * heads * p * p;
    let split = 2.0 * n * 3.0 * h * h + 3.0 * n * 2.0 * h // q, k, v and RoPE on q and k
        + attention
        + 2.0 * n * h * h // o_proj
        + 2.0 * 2.0 * n * h * f + 8.0 * n * f; // fc1, fc2 and GELU
    let layer = 7.0 * n * h * 2.0 + 2.0 * n * h + split / tp;
    let tokens = tiles * 144.0;
    let adapter = 7.0 * n * h
        + 2.0 * tokens * 5632.0 * 4096.0
        + 2.0 * tokens * 4096.0 * 4096.0
        + 2.0 * 8.0 * tokens * 4096.0
        + 2.0 * tokens * 4096.0 * 5120.0;
    assert_close(
        num(images, "encoder_flops"),
        embed + 34.0 * layer + adapter,
        1e-12,
    );
    assert_eq!(images["encoder"], "llama-4-vision");
    assert_eq!(num(images, "encoder_tp"), 4.0);
    assert_eq!(num(images, "image_tokens"), 144.0);
    // Its time is the encoder's own step at that layout.
    let encoder = json(&[
        "run",
        "llama-4-vision",
        "--chip",
        "h200",
        "--mode",
        "roofline",
        "--set",
        "tp=4",
        "--set",
        "images=2",
    ]);
    assert_close(
        num(images, "encoder_s") * 1e6,
        num(&encoder, "step_time_us"),
        1e-12,
    );
    assert_eq!(num(&encoder, "flops"), num(images, "encoder_flops"));
    // The text step is the step at tokens = 1024 + 2 x 144, exactly.
    let longer = json(&[
        "run",
        "llama-4-scout",
        "--chip",
        "h200",
        "--set",
        "tp=4",
        "--set",
        "tokens=1312",
        "--mode",
        "roofline",
    ]);
    assert_eq!(num(&with, "tokens_per_step"), 1312.0);
    assert_eq!(num(&with, "step_time_us"), num(&longer, "step_time_us"));
    assert_eq!(num(&with, "flops"), num(&longer, "flops"));
    assert_close(
        num(images, "prefill_s") * 1e6,
        num(images, "encoder_s") * 1e6 + num(&longer, "step_time_us"),
        1e-12,
    );
}

#[test]
fn image_tokens_and_a_request_follow_the_images() {
    // Two images of 576 tokens (four tiles each): 1152 more prompt tokens, and the encoder
    // does four times the tiles.
    let big = json(&[&SCOUT[..], &["--images", "2", "--image-tokens", "576"]].concat());
    let small = json(&[&SCOUT[..], &["--images", "2"]].concat());
    assert_eq!(num(&big, "tokens_per_step"), 1024.0 + 1152.0);
    assert!(num(&big["vision"], "encoder_flops") > 3.9 * num(&small["vision"], "encoder_flops"));
    // A request's prompt holds the images' tokens and its first token waits for the encoder.
    let request = ["--request", "in=1024,out=64"];
    let with = json(&[&SCOUT[..], &request, &["--images", "2"]].concat());
    let plain_args = [&SCOUT[..], &["--request", "in=1312,out=64"]].concat();
    let plain = json(&plain_args);
    let encoder_s = num(&with["vision"], "encoder_s");
    assert_eq!(num(&with, "input_tokens"), 1312.0);
    let ms = encoder_s * 1e3;
    assert_close(num(&with, "ttft_ms"), num(&plain, "ttft_ms") + ms, 1e-12);
    assert_close(num(&with, "e2e_ms"), num(&plain, "e2e_ms") + ms, 1e-12);
}

#[test]
fn a_model_without_a_vision_encoder_refuses_images() {
    let out = stepcost()
        .args(["run", "llama-3.1-8b", "--chip", "h200", "--images", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`llama-3.1-8b` takes no images"), "{err}");
    assert!(err.contains("vision:"), "{err}");
}

#[test]
fn an_unknown_vision_encoder_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.yaml");
    let scout = include_str!("../workloads/llama-4-scout.yaml");
    std::fs::write(
        &file,
        scout.replace("vision: llama-4-vision", "vision: llama-4-visoin"),
    )
    .unwrap();
    let out = stepcost()
        .args(["run", file.to_str().unwrap(), "--chip", "h200"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llama-4-visoin"), "{err}");
    assert!(err.contains("vision"), "{err}");
    assert!(err.contains("llama-4-vision"), "the closest name: {err}");
}

#[test]
fn a_saved_scenario_keeps_its_images() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    let path = file.to_str().unwrap();
    let args = [&SCOUT[..], &["--images", "3", "--image-tokens", "288"]].concat();
    let first = succeeded(
        stepcost()
            .args(&args)
            .args(["--format", "json", "--save-scenario", path])
            .output()
            .unwrap(),
    );
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("images: 3"), "{saved}");
    assert!(saved.contains("image_tokens: 288"), "{saved}");
    let again = succeeded(
        stepcost()
            .args(["run", "--scenario", path, "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(first, again);
}

#[test]
fn image_tokens_between_two_tiles_are_refused() {
    let args = [&SCOUT[..], &["--images", "1", "--image-tokens", "100"]].concat();
    let out = stepcost().args(&args).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("multiple of 144"), "{err}");
}
