//! hookline: watch agent CLI hook events, map them to canonical events and session states.
