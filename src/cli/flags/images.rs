//! `--images N` and `--image-tokens T`: images in every request's prompt, which a multimodal
//! model's vision encoder turns into prompt tokens at its own cost.

use clap::Args;

use crate::study::images::Images;

/// The images of every request, for `run`, `serving` and `simulate`.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct ImageArgs {
    /// Images in every sequence's prompt: the model's vision encoder (its file's `vision:`)
    /// is priced for them on the same chip before the prefill, and their tokens join the
    /// prompt
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub(crate) images: Option<u64>,
    /// Prompt tokens one image adds (default: the vision encoder's `image_tokens`, 144 for
    /// Llama-4's 336 x 336 tile); needs --images
    #[arg(long, value_name = "T", requires = "images", value_parser = parse_whole)]
    pub(crate) image_tokens: Option<u64>,
}

impl ImageArgs {
    /// The images asked for, if any.
    pub(crate) fn images(&self) -> Option<Images> {
        self.images.map(|count| Images {
            count,
            tokens_each: self.image_tokens,
        })
    }
}

/// A whole number of at least 1, as `--images`, `--image-tokens` and their scenario-file keys
/// take it.
pub(crate) fn parse_whole(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "expected a whole number of at least 1, found `{text}`"
        )),
    }
}
