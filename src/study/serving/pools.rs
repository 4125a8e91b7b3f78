//! The prefill pools a disaggregated point may pair with its decode layout: each a layout of
//! its own on which one prompt's prefill fits, priced once per chip and types.
//!
//! Which layouts: the one `--prefill-set` names (degrees it does not name are 1); else, where
//! the decode layout is given, the same; where the survey takes the smallest layout, the
//! prefill pool's smallest too (prefill is compute-bound, so smaller instances lose less to
//! communication); in a frontier's search, every layout on which a prompt fits, each paired
//! with every decode layout.

use std::ops::ControlFlow;

use super::layouts::{serve_layouts, Layout};
use super::query::{Disagg, LayoutChoice, ServingQuery};
use super::{PrefillPool, Server, ServingError, ServingOptions, ServingPoint};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::workload::Workload;

/// Why prefill apart has no pool: one prompt fits no layout's memory.
pub(crate) const NO_PREFILL_POOL: &str = "no layout tried fits one prompt's prefill";

/// A prefill pool: its layout and one prompt's prefill on it.
#[derive(Clone)]
pub(crate) struct PrefillOption {
    pub layout: Layout,
    pub pool: PrefillPool,
}

/// How one point is priced: prefill where sequences decode, or apart on the pool of that
/// index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    Together,
    Apart(usize),
}

/// The ways `disagg` prices a point, given the prefill pools found.
pub(crate) fn ways(disagg: Disagg, pools: &[PrefillOption]) -> Vec<Way> {
    let mut ways = Vec::new();
    for &apart in disagg.ways() {
        match apart {
            false => ways.push(Way::Together),
            true => ways.extend((0..pools.len()).map(Way::Apart)),
        }
    }
    ways
}

/// `c` in flight on `server`, the way `way` says.
pub(crate) fn price_way(
    server: &mut Server,
    way: Way,
    pools: &[PrefillOption],
    query: &ServingQuery,
    c: u64,
) -> Result<ServingPoint, ServingError> {
    match way {
        Way::Together => server.steady_state(query.shape, c),
        Way::Apart(i) => server.disaggregated_with(&pools[i].pool, query.shape, c, query.kv_link),
    }
}

/// The prefill pools `query` pairs decode layouts with on `chip` at `dtypes` (none where it
/// does not prefill apart).
pub(crate) fn prefill_pools(
    workload: &Workload,
    chip: &Chip,
    dtypes: Types,
    query: &ServingQuery,
) -> Result<Vec<PrefillOption>, Error> {
    if !query.disagg.ways().contains(&true) {
        return Ok(Vec::new());
    }
    let mut scenario = query.scenario.clone();
    let named = !query.prefill_sets.is_empty();
    if named {
        for p in ScenarioParam::LAYOUT {
            let Some(i) = workload.param(p) else {
                continue;
            };
            let size = (query.prefill_sets.iter()).find(|(n, _)| n == p.name());
            scenario.set_param(i, size.map_or(1.0, |(_, v)| *v))?;
        }
    }
    let layouts = match (named, query.layouts) {
        (true, _) | (_, LayoutChoice::Given) => LayoutChoice::Given,
        (false, choice) => choice,
    };
    // The prefill instance drafts nothing: speculation is the decode side's.
    let prefill_query = ServingQuery {
        shape: query.shape,
        concurrency: Vec::new(),
        scenario,
        dtype_choices: Vec::new(),
        layouts,
        options: ServingOptions {
            speculation: None,
            ..query.options
        },
        draft: None,
        disagg: Disagg::Off,
        kv_link: query.kv_link,
        prefill_sets: Vec::new(),
    };
    let mut pools = Vec::new();
    serve_layouts(
        workload,
        chip,
        dtypes,
        &prefill_query,
        &mut |layout, server| {
            let pool = server.and_then(|s| s.prefill_pool(query.shape));
            match pool {
                // The layout asked for is kept even where a prompt does not fit: its points
                // say so.
                Ok(pool) if pool.fits || layouts == LayoutChoice::Given => {
                    pools.push(PrefillOption {
                        layout: layout.clone(),
                        pool,
                    });
                    match layouts {
                        LayoutChoice::All => ControlFlow::Continue(()),
                        _ => ControlFlow::Break(()),
                    }
                }
                _ => ControlFlow::Continue(()),
            }
        },
    )?;
    Ok(pools)
}

/// Refuses prefill sets that are not a layout's degrees, or given without prefill apart.
pub(crate) fn check_prefill_sets(workload: &Workload, query: &ServingQuery) -> Result<(), Error> {
    if query.prefill_sets.is_empty() {
        return Ok(());
    }
    if query.disagg == Disagg::Off {
        return Err(Error::value(
            "--prefill-set: a prefill layout needs prefill apart (--disagg on or auto)",
        ));
    }
    for (name, value) in &query.prefill_sets {
        let known = (ScenarioParam::LAYOUT.iter())
            .find(|p| p.name() == name)
            .filter(|p| workload.param(**p).is_some());
        if known.is_none() {
            let layout: Vec<&str> = (ScenarioParam::LAYOUT.iter())
                .filter(|p| workload.param(**p).is_some())
                .map(|p| p.name())
                .collect();
            return Err(Error::value(format!(
                "--prefill-set {name}={value}: a prefill layout sets only {} of {}",
                layout.join(", "),
                workload.name
            )));
        }
        if !(value.fract() == 0.0 && *value >= 1.0 && *value <= 1024.0) {
            return Err(Error::value(format!(
                "--prefill-set {name}={value}: a parallel degree is a whole number from 1 to 1024"
            )));
        }
    }
    Ok(())
}
