//! Reply decoding and a pipeline of described commands, for the examples
//! (`replay`, `tune`, `bench`), which include this file with `#[path]`.
#![allow(dead_code)]

use redis::Value;

type Res<T> = Result<T, String>;

/// A reply as text: strings as they are, numbers and booleans printed, `(nil)`,
/// and anything else in its debug form.
pub fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::VerbatimString { text, .. } => text.clone(),
        Value::Int(i) => i.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Okay => "OK".to_string(),
        Value::Nil => "(nil)".to_string(),
        other => format!("{other:?}"),
    }
}

/// A reply that was not the one expected, for error messages.
pub fn describe(v: &Value) -> String {
    match v {
        Value::ServerError(e) => format!("server error: {e:?}"),
        other => format!("unexpected reply {other:?}"),
    }
}

/// The status (4th element) of a `HOT.VIEW` reply `[pv, uv, score, status]`.
pub fn view_status(reply: &Value) -> Res<String> {
    match reply {
        Value::Array(items) if items.len() >= 4 => match &items[3] {
            Value::ServerError(e) => Err(format!("server error: {e:?}")),
            v => Ok(text(v)),
        },
        other => Err(format!(
            "{} (want [pv, uv, score, status])",
            describe(other)
        )),
    }
}

/// Pairs, in order, from a flat array `[a, b, a, b, …]` (RESP2), an array of
/// 2-element arrays, or a map (RESP3); none from nil.
pub fn pairs(reply: &Value) -> Res<Vec<(String, String)>> {
    match reply {
        Value::Nil => Ok(Vec::new()),
        Value::Map(kv) => Ok(kv.iter().map(|(k, v)| (text(k), text(v))).collect()),
        Value::Array(items)
            if items
                .iter()
                .all(|i| matches!(i, Value::Array(p) if p.len() == 2)) =>
        {
            Ok(items
                .iter()
                .filter_map(|i| match i {
                    Value::Array(p) => Some((text(&p[0]), text(&p[1]))),
                    _ => None,
                })
                .collect())
        }
        Value::Array(items) if items.len() % 2 == 0 => Ok(items
            .chunks(2)
            .map(|p| (text(&p[0]), text(&p[1])))
            .collect()),
        other => Err(format!("{} (want name/value pairs)", describe(other))),
    }
}

/// A pipeline of commands, each with a description for error messages. Error
/// replies come back as replies (`ignore_errors`), so the caller decides.
pub struct Pipeline {
    pipe: redis::Pipeline,
    origin: Vec<String>,
}

impl Pipeline {
    pub fn new(capacity: usize) -> Self {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        Pipeline {
            pipe,
            origin: Vec::with_capacity(capacity),
        }
    }

    /// Commands queued.
    pub fn len(&self) -> usize {
        self.origin.len()
    }

    pub fn is_empty(&self) -> bool {
        self.origin.is_empty()
    }

    /// Queues command `name`, described by `origin`; add its arguments with
    /// `.arg(…)` on the returned pipeline.
    pub fn cmd(&mut self, name: &str, origin: String) -> &mut redis::Pipeline {
        self.origin.push(origin);
        self.pipe.cmd(name)
    }

    /// Sends the queued commands (nothing when there are none) and returns each
    /// reply with its command's description; the pipeline is empty afterwards.
    pub fn send(&mut self, con: &mut redis::Connection) -> Res<Vec<(Value, String)>> {
        if self.origin.is_empty() {
            return Ok(Vec::new());
        }
        let origin = std::mem::take(&mut self.origin);
        let replies: Res<Vec<Value>> = self
            .pipe
            .query(con)
            .map_err(|e| format!("sending a pipeline of {} commands: {e}", origin.len()));
        self.pipe.clear();
        let replies = replies?;
        if replies.len() != origin.len() {
            return Err(format!(
                "pipeline of {} commands got {} replies",
                origin.len(),
                replies.len()
            ));
        }
        Ok(replies.into_iter().zip(origin).collect())
    }
}
