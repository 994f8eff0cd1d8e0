//! Every command, declared once: its name, handler, flags, how it uses its
//! board key and its ACL categories. `lib.rs` registers the commands from
//! this table ([`super::register::register_commands`]), which also gives each
//! its key spec and ACL categories ([`super::register::set_command_info`]);
//! the `COMMAND DOCS` text comes from [`crate::docs`], by name. Every handler
//! runs behind the panic guard ([`super::guard`]), in the callback that
//! [`crate::command!`] makes.
//!
//! To add a command: a handler `fn(&Context, &[RedisString]) -> Res<RedisValue>`,
//! a row here, and its docs in `src/docs.rs` (`tests/docs.rs` checks them).

use super::{boards, hot, hot_admin, hot_drop, hot_settings, rank, rank_admin, view, Res};
use redis_module::{Context, RedisString, RedisValue};
use std::ffi::CStr;

/// A command handler: the arguments (command name first) → the reply.
pub type Handler = fn(&Context, &[RedisString]) -> Res<RedisValue>;

/// How a command uses its board key (the key spec the server and ACLs see).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAccess {
    /// Reads it (RO ACCESS): a user with read-only key permissions may run it.
    Read,
    /// Reads and updates it (RW ACCESS UPDATE).
    Write,
    /// Removes members from it (RW DELETE).
    Remove,
    /// Deletes it (RM DELETE).
    Delete,
    /// Keyless: no board key (first, last and step key 0, no key spec), as
    /// SCAN. The command reads the keyspace of the node it runs on, so no
    /// ACL key check applies to what it returns. Only for read-only
    /// commands.
    Keyless,
}

/// One command.
pub struct Command {
    /// The name, lower case (`hot.view`).
    pub name: &'static str,
    /// The server's command flags (`write deny-oom fast` …).
    pub flags: &'static CStr,
    pub key: KeyAccess,
    /// ACL categories, set where the server can (7.2+, Valkey).
    pub categories: &'static CStr,
    /// The `RedisModuleCmdFunc` the server calls: the handler behind the
    /// panic guard, made by [`crate::command!`].
    pub func: crate::ffi::CmdFunc,
}

use KeyAccess::{Delete, Keyless, Read, Remove, Write};

/// Every command of the module, in registration order.
pub static COMMANDS: [Command; 28] = [
    crate::command!(
        "hot.publish",
        hot::publish_impl,
        c"write deny-oom fast",
        Write,
        c"write fast"
    ),
    crate::command!(
        "hot.view",
        view::view_impl,
        c"write deny-oom",
        Write,
        c"write"
    ),
    crate::command!("hot.top", hot::top_impl, c"readonly", Read, c"read"),
    // HOT board settings (issue 21).
    crate::command!(
        "hot.create",
        hot_settings::create_impl,
        c"write deny-oom fast",
        Write,
        c"write fast"
    ),
    crate::command!(
        "hot.alter",
        hot_settings::alter_impl,
        c"write deny-oom",
        Write,
        c"write"
    ),
    crate::command!(
        "hot.stats",
        hot::stats_impl,
        c"readonly fast",
        Read,
        c"read fast"
    ),
    crate::command!(
        "rank.create",
        rank::create_impl,
        c"write deny-oom fast",
        Write,
        c"write fast"
    ),
    crate::command!(
        "rank.incr",
        rank::incr_impl,
        c"write deny-oom fast",
        Write,
        c"write fast"
    ),
    crate::command!(
        "rank.set",
        rank::set_impl,
        c"write deny-oom fast",
        Write,
        c"write fast"
    ),
    crate::command!(
        "rank.score",
        rank::score_impl,
        c"readonly fast",
        Read,
        c"read fast"
    ),
    crate::command!(
        "rank.rank",
        rank::rank_impl,
        c"readonly fast",
        Read,
        c"read fast"
    ),
    crate::command!("rank.range", rank::range_impl, c"readonly", Read, c"read"),
    crate::command!(
        "rank.rem",
        rank::rem_impl,
        c"write fast",
        Remove,
        c"write fast"
    ),
    crate::command!(
        "rank.card",
        rank::card_impl,
        c"readonly fast",
        Read,
        c"read fast"
    ),
    crate::command!("rank.around", rank::around_impl, c"readonly", Read, c"read"),
    crate::command!(
        "rank.rangebyscore",
        rank::rangebyscore_impl,
        c"readonly",
        Read,
        c"read"
    ),
    crate::command!(
        "rank.mincr",
        rank::mincr_impl,
        c"write deny-oom",
        Write,
        c"write"
    ),
    crate::command!(
        "rank.drop",
        rank::drop_impl,
        c"write",
        Delete,
        c"write keyspace"
    ),
    // Sharded leaderboards (issue 24): members ahead of a position.
    crate::command!(
        "rank.count",
        rank::count_impl,
        c"readonly fast",
        Read,
        c"read fast"
    ),
    // Board lifecycle (issue 22).
    crate::command!("hot.rem", hot_admin::rem_impl, c"write", Remove, c"write"),
    crate::command!(
        "hot.export",
        hot_admin::export_impl,
        c"readonly",
        Read,
        c"read"
    ),
    crate::command!("hot.info", hot_admin::info_impl, c"readonly", Read, c"read"),
    crate::command!(
        "hot.drop",
        hot_drop::drop_impl,
        c"write",
        Delete,
        c"write keyspace"
    ),
    crate::command!(
        "rank.info",
        rank_admin::info_impl,
        c"readonly",
        Read,
        c"read"
    ),
    // Listing a node's boards (issue 22): keyless, flags and ACL
    // categories as SCAN's.
    crate::command!(
        "hot.boards",
        boards::hot_boards_impl,
        c"readonly",
        Keyless,
        c"keyspace read slow"
    ),
    crate::command!(
        "rank.boards",
        boards::rank_boards_impl,
        c"readonly",
        Keyless,
        c"keyspace read slow"
    ),
    // Boards under memory pressure (issue 36): an identity key rebuilt.
    crate::command!(
        "hot.repair",
        hot_settings::repair_impl,
        c"write deny-oom",
        Write,
        c"write"
    ),
    crate::command!(
        "rank.repair",
        rank_admin::repair_impl,
        c"write deny-oom",
        Write,
        c"write"
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lower_case_and_flags_match_the_key_access() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
        for c in &COMMANDS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            let flags = c.flags.to_str().unwrap();
            let readonly = flags.split(' ').any(|f| f == "readonly");
            assert_eq!(readonly, matches!(c.key, Read | Keyless), "{}", c.name);
            assert_eq!(
                !readonly,
                flags.split(' ').any(|f| f == "write"),
                "{}",
                c.name
            );
        }
    }
}
