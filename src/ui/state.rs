//! What the server keeps between requests: its limits and a bounded cache of loaded
//! workloads (nothing a request could grow without bound), and how a request's workload and
//! chips are loaded: built-in names or pasted text only, never a path.

use std::collections::HashSet;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::budget::MAX_CHIPS;
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

/// Answers held for clients that have not read them yet, in all, in answer limits: past
/// this, a request waits for room before its work starts (and gets 408 at its time limit).
pub(crate) const HELD_ANSWERS: u64 = 4;

/// The server's state, shared by every request.
pub(crate) struct State {
    pub(crate) limits: Limits,
    cache: Mutex<VecDeque<(Source, Arc<Workload>)>>,
    /// Room for answers not yet sent, in KiB: [`HELD_ANSWERS`] answer limits.
    held: Arc<Semaphore>,
}

impl State {
    pub(crate) fn new(limits: Limits) -> State {
        let kib = HELD_ANSWERS.saturating_mul(limits.answer_bytes) / 1024;
        State {
            limits,
            cache: Mutex::new(VecDeque::new()),
            held: Arc::new(Semaphore::new(
                kib.min(Semaphore::MAX_PERMITS as u64) as usize
            )),
        }
    }

    /// Waits for room to hold an answer of `bytes` (at most the answer limit) until it is sent.
    pub(crate) async fn hold(&self, bytes: u64) -> Result<OwnedSemaphorePermit, ApiError> {
        let kib = bytes.min(self.limits.answer_bytes).div_ceil(1024);
        let permits = u32::try_from(kib).unwrap_or(u32::MAX);
        Arc::clone(&self.held)
            .acquire_many_owned(permits)
            .await
            .map_err(|_| {
                ApiError::with_status(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping")
            })
    }

    /// Makes `held` (room taken for an estimate) the room `bytes` take: the excess is given
    /// back, or more is taken if there is some now; none is 503.
    pub(crate) fn resize(
        &self,
        mut held: OwnedSemaphorePermit,
        bytes: usize,
    ) -> Result<OwnedSemaphorePermit, ApiError> {
        let kib = (bytes as u64).div_ceil(1024);
        let now = held.num_permits() as u64;
        if kib < now {
            drop(held.split((now - kib) as usize));
        } else if kib > now {
            let more = u32::try_from(kib - now).unwrap_or(u32::MAX);
            let extra = Arc::clone(&self.held).try_acquire_many_owned(more).map_err(|_| {
                ApiError::with_status(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server holds as many answers as it may for clients that have not read them yet; \
                     try again",
                )
            })?;
            held.merge(extra);
        }
        Ok(held)
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
        let workload = Arc::new(load(&source)?);
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

/// A workload from a built-in's file or a request's text: a template it names is a built-in
/// one, never a file of the server's working folder.
fn load(source: &Source) -> Result<Workload, ApiError> {
    let builtin = source.name.ends_with("(built-in)");
    Ok(match builtin {
        true => Workload::load(source)?,
        false => Workload::load_detached(source)?,
    })
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

/// The names of the request's chips, `all` expanded (as the command line's `--chip all`: the
/// chips that ship) and each named once, in the order first named: what it prices and what
/// the limit of [`MAX_CHIPS`] counts.
pub(crate) fn chip_names(request: &ScenarioRequest) -> Result<Vec<String>, ApiError> {
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for name in request.chips.names() {
        if name == "all" {
            if !seen.insert(name) {
                continue;
            }
            for (id, _) in builtin::CHIPS {
                let chip = Chip::load(&Source::builtin(id, FileKind::Chip)?)?;
                if chip.status() == ChipStatus::Available && seen.insert((*id).to_owned()) {
                    names.push((*id).to_owned());
                }
            }
        } else if seen.insert(name.clone()) {
            names.push(name);
        }
    }
    if names.is_empty() || names.len() > MAX_CHIPS {
        return Err(ApiError::bad(format!(
            "give `chips`: from one to {MAX_CHIPS} built-in chip names (or `all`); these name {} \
             once `all` is expanded and repeats removed",
            names.len()
        )));
    }
    Ok(names)
}

/// The request's chips (see [`chip_names`]), each at the request's prices and in its cost
/// view.
pub(crate) fn chips(request: &ScenarioRequest) -> Result<Vec<Chip>, ApiError> {
    let mut chips = Vec::new();
    for name in chip_names(request)? {
        let chip = Chip::load(&Source::builtin(&name, FileKind::Chip)?)?;
        chips.push(chip);
    }
    let no_book = || Ok(PriceBook::default());
    Ok(request.cost()?.apply(chips, no_book)?)
}
