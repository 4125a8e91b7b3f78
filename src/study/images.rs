//! Images in a prompt: a multimodal model's vision encoder (the workload its file links with
//! `vision:`) encodes each sequence's images into prompt tokens at its own cost, on the same
//! chip, before the language model's prefill, whose prompt grows by those tokens. `run`
//! prices the two steps and reports the language model's, with the encoder's beside it.

use crate::base::error::Error;
use crate::core::chip::Chip;
use crate::core::scenario::{Scenario, ScenarioSpec};
use crate::core::timing::{price, ImagesSummary, StepReport};
use crate::core::workload::Workload;

/// The images of one request, as `--images N` and `--image-tokens T` give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Images {
    /// Images per sequence; at least 1.
    pub count: u64,
    /// Prompt tokens one image adds; `None`: the encoder's own `image_tokens` default.
    pub tokens_each: Option<u64>,
}

/// The language model's step at `spec` with `images` in every sequence's prompt: the vision
/// encoder's step priced (at the step's `tp` where the encoder's heads split that many ways,
/// else at `tp=1`, which the summary says), and the step priced at `tokens` plus the images'
/// tokens. Returns the step's scenario and its report, with [`StepReport::images`] set.
pub fn price_with_images(
    workload: &Workload,
    chip: &Chip,
    spec: &ScenarioSpec,
    images: Images,
) -> Result<(Scenario, StepReport), Error> {
    let Some(vision) = workload.vision() else {
        return Err(Error::value(format!(
            "workload `{}` takes no images: its file links no vision encoder (`vision:`), so \
             --images has nothing to price them with",
            workload.id()
        )));
    };
    if images.count == 0 || images.tokens_each == Some(0) {
        return Err(Error::value(
            "--images and --image-tokens take a whole number of at least 1",
        ));
    }
    let encoder = Workload::load(vision)?;
    let plain = price(workload, chip, &Scenario::resolve(workload, spec)?)?;
    let param = |r: &StepReport, name: &str| r.params.iter().find(|(n, _)| n == name).map(|p| p.1);
    let Some(tokens) = param(&plain, "tokens") else {
        return Err(Error::value(format!(
            "workload `{}` has no `tokens` param, so images cannot add to its prompt",
            workload.id()
        )));
    };
    let batch = param(&plain, "batch").unwrap_or(1.0);
    let tp = param(&plain, "tp").unwrap_or(1.0);
    let encoded = images.count as f64 * batch;
    let (encoded_report, note) = encode(&encoder, chip, spec, images, encoded, tp)?;
    let tokens_each = param(&encoded_report, "image_tokens").ok_or_else(|| {
        Error::value(format!(
            "vision encoder `{}` has no `image_tokens` param: the tokens an image adds",
            encoder.id()
        ))
    })?;
    // An image is whole tiles: a token count between two tiles' is no image the encoder makes.
    if let Some(tile) = param(&encoded_report, "tile_tokens").filter(|t| *t > 0.0) {
        if tokens_each % tile != 0.0 {
            return Err(Error::value(format!(
                "--image-tokens {tokens_each}: vision encoder `{}` makes {tile} tokens a tile,                  so an image's tokens are a multiple of {tile}",
                encoder.id()
            )));
        }
    }
    let mut text = spec.clone();
    text.sets.push((
        "tokens".to_owned(),
        tokens + images.count as f64 * tokens_each,
    ));
    let scenario = Scenario::resolve(workload, &text)?;
    let mut report = price(workload, chip, &scenario)?;
    let encoder_s = encoded_report.summary.step_time_s;
    report.images = Some(ImagesSummary {
        images: images.count,
        image_tokens: tokens_each as u64,
        encoder: encoder.id().to_owned(),
        encoded_images: encoded as u64,
        encoder_tp: param(&encoded_report, "tp").unwrap_or(1.0) as u64,
        encoder_tp_note: note,
        encoder_flops: encoded_report.summary.flops,
        encoder_s,
        prefill_s: encoder_s + report.summary.step_time_s,
    });
    Ok((scenario, report))
}

/// The encoder's step for `encoded` images at the step's mode and engine, in the encoder's
/// own types and fusion: at `tp` where its `whole:` checks allow, else at `tp=1` with why.
fn encode(
    encoder: &Workload,
    chip: &Chip,
    spec: &ScenarioSpec,
    images: Images,
    encoded: f64,
    tp: f64,
) -> Result<(StepReport, Option<String>), Error> {
    let mut sets = vec![("images".to_owned(), encoded)];
    if let Some(t) = images.tokens_each {
        sets.push(("image_tokens".to_owned(), t as f64));
    }
    let at = |tp: Option<f64>| {
        let mut sets = sets.clone();
        sets.extend(tp.map(|tp| ("tp".to_owned(), tp)));
        let spec = ScenarioSpec {
            sets,
            dtypes: Vec::new(),
            fusion: None,
            ..spec.clone()
        };
        price(encoder, chip, &Scenario::resolve(encoder, &spec)?)
    };
    if tp <= 1.0 {
        return Ok((at(None)?, None));
    }
    match at(Some(tp)) {
        Err(Error::Layout(why)) => {
            let note = format!(
                "the encoder runs at tp=1: tp={tp} does not fit it ({})",
                why.0.first().map_or("", |d| d.message.as_str())
            );
            Ok((at(Some(1.0))?, Some(note)))
        }
        other => Ok((other?, None)),
    }
}

/// [`StepReport::with_request`] for a step priced with images: the request's prompt holds
/// every image's tokens too, and its first token waits for the encoder's step as well as the
/// prefill (TTFT and end to end longer by the encoder's time, output tokens/s lower by as
/// much). A step priced without images gets the plain request.
pub fn request_with_images(
    report: StepReport,
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    (input, output): (u64, u64),
) -> Result<StepReport, Error> {
    let Some(images) = report.images.clone() else {
        return report.with_request(workload, chip, scenario, (input, output));
    };
    let prompt = input + images.images * images.image_tokens;
    let mut report = report.with_request(workload, chip, scenario, (prompt, output))?;
    if let Some(r) = &mut report.request {
        r.output_tokens_per_s *= r.e2e_s / (r.e2e_s + images.encoder_s);
        r.ttft_s += images.encoder_s;
        r.e2e_s += images.encoder_s;
    }
    Ok(report)
}
