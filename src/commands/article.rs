//! What a HOT board knows of one article, read from its keys: PV (its
//! counter), UV (its HyperLogLog) and publish time (its meta hash). Used by
//! the read commands (HOT.TOP, HOT.STATS, HOT.EXPORT) and by the writes
//! that rescore (HOT.PUBLISH, HOT.ALTER, HOT.REPAIR); it imports no other
//! handler module.

use super::board::uv_of;
use super::published_at;
use super::{article_counts_whole, counter_of, BoardCtx, Res};
use crate::ffi::KeyKind;
use crate::keys::Kind;

/// What HOT.TOP needs of an article.
pub struct Facts {
    pub pv: i64,
    pub uv: i64,
    pub published: Option<i64>,
}

/// An article's PV (its counter), UV (its HyperLogLog) and publish time
/// (its meta hash): the one source of each. `None` for an unknown article
/// (no PV and no publish time).
///
/// The counts are one state only while all three keys live: a counted
/// view writes them together and retention expires them together, so an
/// article missing one of them lost it to eviction (docs/eviction.md).
/// Its PV and UV then read as 0, as an article whose counters retention
/// forgot (its publish time stays when its meta hash does), never as a
/// count mixed from two lives; its next counted view starts them afresh
/// ([`article_counts_whole`]).
pub(super) fn facts(b: &BoardCtx, article: &[u8]) -> Res<Option<Facts>> {
    let (_, meta) = b.open_derived(Kind::Meta, &[article], KeyKind::Hash, false)?;
    let published = published_at(&meta)?;
    let (_, pv_h) = b.open_derived(Kind::Pv, &[article], KeyKind::String, false)?;
    if pv_h.kind() == KeyKind::Empty && published.is_none() {
        return Ok(None);
    }
    let (_, uv_h) = b.open_derived(Kind::Uv, &[article], KeyKind::String, false)?;
    // Each is checked even when not whole: a value hotrank did not write
    // is refused, as a view would refuse it.
    let (pv, uv) = (counter_of(&pv_h)?, uv_of(&uv_h)?);
    let (pv, uv) = if article_counts_whole(&pv_h, &uv_h, published) {
        (pv, uv)
    } else {
        (0, 0)
    };
    if pv == 0 && published.is_none() {
        return Ok(None);
    }
    Ok(Some(Facts { pv, uv, published }))
}
