//! From the events directory to canonical events, in order, once per durable cursor.
//!
//! * [`source`]: the directory's files, listed and read;
//! * [`cursor`]: a consumer's durable position;
//! * [`mapping`]: an envelope to a canonical event, through its CLI's profile;
//! * [`reader`]: the merge of every directory into one ordered stream;
//! * [`echo`]: copies of one event reported by several producers, told apart from events;
//! * [`watch`]: the reader woken by file-system notifications (or polling);
//! * [`retention`]: pruning what every cursor has passed;
//! * [`follow`]: the loop every consumer runs, into a [`follow::Sink`].

pub mod cursor;
pub mod echo;
pub mod follow;
pub mod mapping;
pub mod reader;
pub mod retention;
pub mod source;
pub mod watch;
