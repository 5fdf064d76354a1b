//! What a session has said about its own work: its task list (todo list), and the tool calls
//! of its turn repeated with the same input (a livelock).
//!
//! The list is folded from the events' [`TodoChange`]s: an item by id is created or changed
//! (what the event does not say stays as it was; `deleted` removes it), a whole list replaces
//! the previous one. A status the CLI writes in other words is kept as missing, and such an
//! item is not open: an uncertain item never asks for a nudge.

use serde::{Deserialize, Serialize};

use crate::canonical::{Event, Kind, TodoChange};
use crate::vocab::TodoStatus;

/// Most items a session's list keeps (the oldest go first).
const MAX_ITEMS: usize = 200;

/// One item of a session's own task list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TodoItem {
    /// Its id (for a whole list without ids, its position from 1).
    pub id: String,
    /// What it says, when an event said it.
    pub subject: Option<String>,
    /// Its status; missing when no event gave one hookline knows.
    pub status: Option<TodoStatus>,
}

impl TodoItem {
    /// Whether the item is still to do (`pending` or `in_progress`).
    pub fn is_open(&self) -> bool {
        self.status.is_some_and(TodoStatus::is_open)
    }
}

/// A session's task list, in the order items were first seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TodoList {
    items: Vec<TodoItem>,
}

impl TodoList {
    /// Applies one change.
    pub fn apply(&mut self, change: &TodoChange) {
        match change {
            TodoChange::Item { id, subject, status } => {
                let status = status.as_deref().map(TodoStatus::from_word);
                if status == Some(Some(TodoStatus::Deleted)) {
                    self.items.retain(|item| item.id != *id);
                    return;
                }
                let item = match self.items.iter_mut().find(|item| item.id == *id) {
                    Some(item) => item,
                    None => {
                        if self.items.len() >= MAX_ITEMS {
                            self.items.remove(0);
                        }
                        self.items.push(TodoItem { id: id.clone(), subject: None, status: None });
                        self.items.last_mut().expect("just pushed")
                    }
                };
                if subject.is_some() {
                    item.subject.clone_from(subject);
                }
                if let Some(status) = status {
                    item.status = status;
                }
            }
            TodoChange::List { items } => {
                self.items = items
                    .iter()
                    .enumerate()
                    .take(MAX_ITEMS)
                    .map(|(i, entry)| TodoItem {
                        id: entry.id.clone().unwrap_or_else(|| (i + 1).to_string()),
                        subject: entry.subject.clone(),
                        status: entry.status.as_deref().and_then(TodoStatus::from_word),
                    })
                    .filter(|item| item.status != Some(TodoStatus::Deleted))
                    .collect();
            }
        }
    }

    /// Every item, in order (what a checkpoint keeps).
    pub(crate) fn items(&self) -> &[TodoItem] {
        &self.items
    }

    /// A list of these items, as a checkpoint kept them (at most the list's bound).
    pub(crate) fn from_items(mut items: Vec<TodoItem>) -> TodoList {
        let extra = items.len().saturating_sub(MAX_ITEMS);
        items.drain(..extra);
        TodoList { items }
    }

    /// The open items, in order.
    pub fn open(&self) -> Vec<TodoItem> {
        self.items.iter().filter(|item| item.is_open()).cloned().collect()
    }
}

/// The same tool called with the same input, consecutively, in the current turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RepeatedCall {
    /// The tool.
    pub tool: Option<String>,
    /// The digest of its input.
    pub input_digest: String,
    /// How many identical calls in a row (1: the last call, not repeated yet).
    pub count: u32,
}

impl RepeatedCall {
    /// The run after `event`: one longer for the same tool and input, a new run for another
    /// call, none for a call whose input the event does not carry (it cannot be compared).
    pub(super) fn after(last: Option<RepeatedCall>, event: &Event) -> Option<RepeatedCall> {
        let Kind::ToolStart { tool } = &event.kind else { return last };
        let digest = event.input_digest.clone()?;
        match last {
            Some(run) if run.tool == *tool && run.input_digest == digest => {
                Some(RepeatedCall { count: run.count.saturating_add(1), ..run })
            }
            _ => Some(RepeatedCall { tool: tool.clone(), input_digest: digest, count: 1 }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::TodoEntry;

    fn item(id: &str, subject: Option<&str>, status: Option<&str>) -> TodoChange {
        TodoChange::Item {
            id: id.into(),
            subject: subject.map(Into::into),
            status: status.map(Into::into),
        }
    }

    fn subjects(list: &TodoList) -> Vec<String> {
        list.open().into_iter().map(|i| i.subject.unwrap_or_default()).collect()
    }

    #[test]
    fn created_items_are_open_until_completed_or_deleted() {
        let mut list = TodoList::default();
        list.apply(&item("1", Some("First task"), Some("pending")));
        list.apply(&item("2", Some("Second task"), Some("pending")));
        list.apply(&item("3", Some("Third task"), Some("pending")));
        // TaskUpdate says only the id and the status: the subject stays.
        list.apply(&item("1", None, Some("in_progress")));
        assert_eq!(subjects(&list), ["First task", "Second task", "Third task"]);
        assert_eq!(list.open()[0].status, Some(TodoStatus::InProgress));
        list.apply(&item("1", None, Some("completed")));
        list.apply(&item("3", None, Some("deleted")));
        assert_eq!(subjects(&list), ["Second task"]);
        // TaskCompleted after TaskUpdate(completed): the same, once.
        list.apply(&item("1", Some("First task"), Some("completed")));
        assert_eq!(subjects(&list), ["Second task"]);
    }

    #[test]
    fn an_update_for_an_item_never_seen_creates_it_and_an_unknown_status_is_not_open() {
        let mut list = TodoList::default();
        list.apply(&item("7", None, Some("in_progress")));
        assert_eq!(list.open().len(), 1);
        assert_eq!(list.open()[0].subject, None);
        list.apply(&item("7", None, Some("blocked")));
        assert!(list.open().is_empty(), "a status hookline does not know is not open");
        list.apply(&item("8", Some("no status yet"), None));
        assert!(list.open().is_empty());
    }

    #[test]
    fn the_latest_whole_list_replaces_everything_before_it() {
        let mut list = TodoList::default();
        list.apply(&item("1", Some("from a task hook"), Some("pending")));
        let entry = |subject: &str, status: &str| TodoEntry {
            id: None,
            subject: Some(subject.into()),
            status: Some(status.into()),
        };
        list.apply(&TodoChange::List {
            items: vec![entry("write the parser", "completed"), entry("test it", "in_progress")],
        });
        assert_eq!(subjects(&list), ["test it"]);
        assert_eq!(list.open()[0].id, "2");
        list.apply(&TodoChange::List { items: vec![entry("test it", "completed")] });
        assert!(list.open().is_empty());
    }

    fn tool_start(tool: &str, digest: Option<&str>) -> Event {
        let mut event = crate::testing::event(Kind::ToolStart { tool: Some(tool.into()) });
        event.input_digest = digest.map(Into::into);
        event
    }

    #[test]
    fn identical_consecutive_calls_make_a_run_and_another_call_starts_a_new_one() {
        let mut run = None;
        for _ in 0..4 {
            run = RepeatedCall::after(run, &tool_start("Bash", Some("aa")));
        }
        assert_eq!(run.as_ref().map(|r| r.count), Some(4));
        run = RepeatedCall::after(run, &tool_start("Read", Some("aa")));
        assert_eq!(run.as_ref().map(|r| (r.tool.as_deref(), r.count)), Some((Some("Read"), 1)));
        run = RepeatedCall::after(run, &tool_start("Read", Some("bb")));
        assert_eq!(run.as_ref().map(|r| r.count), Some(1));
        // A tool end does not break the run; a call without an input digest does.
        let end = crate::testing::event(Kind::ToolEnd { tool: Some("Read".into()), ok: true });
        run = RepeatedCall::after(run, &end);
        run = RepeatedCall::after(run, &tool_start("Read", Some("bb")));
        assert_eq!(run.as_ref().map(|r| r.count), Some(2));
        assert_eq!(RepeatedCall::after(run, &tool_start("Read", None)), None);
    }
}
