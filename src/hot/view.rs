//! What one page view does: the "decide" step of HOT.VIEW. Pure Rust, no
//! Redis; times are milliseconds since the unix epoch.
//!
//! HOT.VIEW is built as read → decide → write: the glue opens the keys and
//! gathers [`ViewFacts`], [`decide`] returns the [`Outcome`] (or an error,
//! before anything is written), and the glue applies it and replicates its
//! effects. So a view that fails writes nothing.

use super::Formula;

/// What the glue read before deciding.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewFacts {
    /// View time (ms): `AT t`, or the server clock.
    pub t: i64,
    /// The article's PV counter before this view (0 when missing).
    pub pv: i64,
    /// The article's stored publish time (ms), if any.
    pub published: Option<i64>,
    /// Views of this visitor on the board in the current visitor window
    /// before this one; `None` when the abnormal-traffic check is off.
    pub visitor_views: Option<i64>,
    /// `hotrank.visitor-max-views` (used when `visitor_views` is `Some`).
    pub visitor_max: i64,
    /// Whether dedup found a counted view of the pair within the window.
    pub duplicate: bool,
}

/// The decision for one view.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Past the visitor limit: only the suspicious counter (and the
    /// visitor's view count) moves; the ranking does not.
    Suspicious,
    /// A repeat of a counted view of the pair: only the visitor's view count moves.
    Duplicate,
    /// Counted: the PV counter becomes `pv`, the score is computed at `t`
    /// from `published` (the stored publish time, or the view time for an
    /// article without one, which `new_publish` then records).
    Counted {
        pv: i64,
        published: i64,
        new_publish: bool,
    },
}

/// Why a view cannot be applied. Nothing is written.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewError {
    /// A counter is at `i64::MAX` and cannot take one more.
    Overflow,
    /// The formula's parameters are outside their ranges (see
    /// [`Formula::is_valid`]), so a score could be non-finite.
    BadFormula,
}

/// Decides a view from its facts. Checks come first: the visitor limit
/// (abnormal traffic), then dedup, then the counters that a counted view
/// increments; every counter that will take one more is checked for overflow.
pub fn decide(f: &Formula, v: &ViewFacts) -> Result<Outcome, ViewError> {
    if !f.is_valid() {
        return Err(ViewError::BadFormula);
    }
    if let Some(n) = v.visitor_views {
        if n == i64::MAX {
            return Err(ViewError::Overflow);
        }
        if n + 1 > v.visitor_max {
            return Ok(Outcome::Suspicious);
        }
    }
    if v.duplicate {
        return Ok(Outcome::Duplicate);
    }
    let pv = v.pv.checked_add(1).ok_or(ViewError::Overflow)?;
    Ok(Outcome::Counted {
        pv,
        published: v.published.unwrap_or(v.t),
        new_publish: v.published.is_none(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn facts() -> ViewFacts {
        ViewFacts {
            t: 1_000,
            pv: 4,
            published: Some(0),
            visitor_views: Some(0),
            visitor_max: 60,
            duplicate: false,
        }
    }

    #[test]
    fn a_fresh_view_is_counted_and_keeps_the_publish_time() {
        let o = decide(&Formula::default(), &facts()).unwrap();
        assert_eq!(
            o,
            Outcome::Counted {
                pv: 5,
                published: 0,
                new_publish: false
            }
        );
    }

    #[test]
    fn an_unpublished_article_is_published_at_its_first_counted_view() {
        let v = ViewFacts {
            published: None,
            ..facts()
        };
        let o = decide(&Formula::default(), &v).unwrap();
        assert_eq!(
            o,
            Outcome::Counted {
                pv: 5,
                published: 1_000,
                new_publish: true
            }
        );
    }

    #[test]
    fn the_visitor_limit_wins_over_dedup() {
        let v = ViewFacts {
            visitor_views: Some(60),
            duplicate: true,
            ..facts()
        };
        assert_eq!(decide(&Formula::default(), &v), Ok(Outcome::Suspicious));
        let v = ViewFacts {
            visitor_views: None,
            duplicate: true,
            ..facts()
        };
        assert_eq!(decide(&Formula::default(), &v), Ok(Outcome::Duplicate));
    }

    #[test]
    fn full_counters_and_bad_formulas_are_refused() {
        let v = ViewFacts {
            pv: i64::MAX,
            ..facts()
        };
        assert_eq!(decide(&Formula::default(), &v), Err(ViewError::Overflow));
        let v = ViewFacts {
            visitor_views: Some(i64::MAX),
            ..facts()
        };
        assert_eq!(decide(&Formula::default(), &v), Err(ViewError::Overflow));
        let f = Formula {
            base: 1e-300,
            ..Formula::default()
        };
        assert_eq!(decide(&f, &facts()), Err(ViewError::BadFormula));
    }

    proptest! {
        /// A counted view adds exactly one PV; the other outcomes add none.
        #[test]
        fn only_a_counted_view_moves_the_pv(pv in 0i64..1_000_000, n in 0i64..100, dup: bool, max in 0i64..100) {
            let v = ViewFacts { pv, visitor_views: Some(n), visitor_max: max, duplicate: dup, ..facts() };
            match decide(&Formula::default(), &v).unwrap() {
                Outcome::Counted { pv: p, .. } => prop_assert!(p == pv + 1 && !dup && n < max),
                Outcome::Duplicate => prop_assert!(dup && n < max),
                Outcome::Suspicious => prop_assert!(n >= max),
            }
        }
    }
}
