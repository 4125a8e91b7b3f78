//! What the server keeps between requests: its limits and a bounded cache of loaded
//! workloads (nothing a request could grow without bound), and how a request's workload and
//! chips are loaded: built-in names or pasted text only, never a path.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::error::ApiError;
use super::request::{ScenarioRequest, PASTED_CONFIG, PASTED_YAML};
use super::Limits;
use crate::base::builtin;
use crate::base::source::{FileKind, Source};
use crate::core::chip::{Chip, ChipStatus};
use crate::core::cost::book::PriceBook;
use crate::core::workload::Workload;
use crate::study::import;

/// Workloads kept loaded, the oldest dropped first.
const CACHE_ENTRIES: usize = 32;
/// Longest text a cache entry keeps (with [`CACHE_ENTRIES`], at most 8 MiB held).
const CACHE_TEXT_BYTES: usize = 256 * 1024;

/// Most chips a request names (every built-in chip is `all`).
const MAX_CHIPS: usize = 64;

/// The server's state, shared by every request.
pub(crate) struct State {
    pub(crate) limits: Limits,
    cache: Mutex<VecDeque<(Source, Arc<Workload>)>>,
}

impl State {
    pub(crate) fn new(limits: Limits) -> State {
        State {
            limits,
            cache: Mutex::new(VecDeque::new()),
        }
    }

    /// The request's workload, loaded (or found in the cache).
    pub(crate) fn workload(&self, request: &ScenarioRequest) -> Result<Arc<Workload>, ApiError> {
        let source = source(request)?;
        let same =
            |(s, _): &&(Source, Arc<Workload>)| s.name == source.name && s.text == source.text;
        if let Ok(cache) = self.cache.lock() {
            if let Some((_, workload)) = cache.iter().find(same) {
                return Ok(Arc::clone(workload));
            }
        }
        let workload = Arc::new(Workload::load(&source)?);
        if source.text.len() <= CACHE_TEXT_BYTES {
            if let Ok(mut cache) = self.cache.lock() {
                if cache.len() == CACHE_ENTRIES {
                    cache.pop_front();
                }
                cache.push_back((source, Arc::clone(&workload)));
            }
        }
        Ok(workload)
    }
}

/// The request's workload as a file: a built-in's, or the pasted text (a config imported as
/// `stepcost import` does). Exactly one of the three must be given.
pub(crate) fn source(request: &ScenarioRequest) -> Result<Source, ApiError> {
    let source = match (
        &request.workload,
        &request.workload_yaml,
        &request.hf_config,
    ) {
        (Some(name), None, None) => return Ok(Source::builtin(name, FileKind::Workload)?),
        (None, Some(text), None) => Source::from_text(PASTED_YAML, text),
        (None, None, Some(text)) => {
            let imported = import::import(text, PASTED_CONFIG, None)?;
            Source::from_text(PASTED_CONFIG, &imported.yaml)
        }
        _ => {
            return Err(ApiError::bad(
                "give the workload as one of `workload` (a built-in name), `workload_yaml` (a \
                 workload file's text) or `hf_config` (a config.json's text)",
            ))
        }
    };
    builtin_template(&source)?;
    Ok(source)
}

/// Refuses pasted text whose `template` is not a built-in template: a name there would
/// otherwise be read as a path on the server.
fn builtin_template(source: &Source) -> Result<(), ApiError> {
    #[derive(serde::Deserialize)]
    struct Named {
        template: Option<String>,
    }
    // Text that does not parse gets the loader's own message, with its line.
    let Ok(Named {
        template: Some(name),
    }) = source.parse::<Named>()
    else {
        return Ok(());
    };
    if builtin::TEMPLATES.iter().any(|(id, _)| *id == name) {
        return Ok(());
    }
    let known: Vec<&str> = builtin::TEMPLATES.iter().map(|(id, _)| *id).collect();
    Err(ApiError::bad(format!(
        "{}: template `{name}`: a pasted workload may name only a built-in template ({})",
        source.name,
        known.join(", ")
    )))
}

/// The request's chips: built-in names (or `all`), each at the request's prices and in its
/// cost view.
pub(crate) fn chips(request: &ScenarioRequest) -> Result<Vec<Chip>, ApiError> {
    let names = request.chips.names();
    if names.is_empty() || names.len() > MAX_CHIPS {
        return Err(ApiError::bad(format!(
            "give `chips`: from one to {MAX_CHIPS} built-in chip names (or `all`)"
        )));
    }
    let mut chips = Vec::new();
    for name in &names {
        if name == "all" {
            // As the command line's `--chip all`: the chips that ship.
            for (id, _) in builtin::CHIPS {
                let chip = Chip::load(&Source::builtin(id, FileKind::Chip)?)?;
                if chip.status() == ChipStatus::Available {
                    chips.push(chip);
                }
            }
        } else {
            chips.push(Chip::load(&Source::builtin(name, FileKind::Chip)?)?);
        }
    }
    let no_book = || Ok(PriceBook::default());
    Ok(request.cost()?.apply(chips, no_book)?)
}
