//! One request, answered by a running engine: the transport's only job is to carry requests
//! to the engine and its answers back ([`reply`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::engine::Running;
use crate::engine::deliver::{Cancel, Order};
use crate::errors::chain;
use crate::protocol::{
    Answer, DecideAnswer, LeasesAnswer, ReleaseAnswer, ReloadAnswer, Reply, Request,
    SessionsAnswer, SlotAnswer, StateAnswer, parse,
};

/// Reads the policy and the profiles again, for a `reload` request: the command that runs the
/// server knows where they come from.
pub type Reloader = Arc<dyn Fn(&Running) -> Result<ReloadAnswer, String> + Send + Sync>;

/// Answers a request [`parse`] read. `cancel` is raised when the requester goes away: a
/// `deliver` that has not started typing then types nothing.
pub fn reply(
    running: &Running,
    id: Value,
    request: Request,
    cancel: &Cancel,
    reload: Option<&Reloader>,
) -> Reply {
    let op = request.op();
    let answer: Result<Answer, String> = match request {
        Request::Hello(_) => Ok(Answer::Hello(Box::new(running.hello()))),
        Request::Decide(r) => running
            .decide(&r)
            .map(|decision| Answer::Decide(DecideAnswer { decision: Box::new(decision) }))
            .map_err(|e| chain(&e)),
        Request::TakeInputSlot(r) => running
            .take_input_slot(&r.session, r.expect)
            .map(|result| Answer::TakeInputSlot(Box::new(SlotAnswer::from(result))))
            .map_err(|e| chain(&e)),
        Request::Release(r) => running
            .release(&r.lease)
            .map(|released| Answer::Release(ReleaseAnswer { released }))
            .map_err(|e| chain(&e)),
        Request::Leases(_) => Ok(Answer::Leases(LeasesAnswer { leases: running.leases() })),
        Request::State(r) => running
            .view(&r.session)
            .map(|view| Answer::State(StateAnswer { view: view.map(Box::new) }))
            .map_err(|e| chain(&e)),
        Request::Sessions(_) => running
            .views()
            .map(|sessions| Answer::Sessions(SessionsAnswer { sessions }))
            .map_err(|e| chain(&e)),
        Request::Lookup(r) => Ok(Answer::Lookup(running.lookup(&r.session))),
        Request::NextEvent(r) => running
            .next_event(&r.session, Duration::from_millis(r.timeout_ms), r.after_ns)
            .map(Answer::NextEvent)
            .map_err(|e| chain(&e)),
        Request::Deliver(r) => running
            .deliver(&Order::from(&r), cancel)
            .map(|a| Answer::Deliver(Box::new(a)))
            .map_err(|e| chain(&e)),
        Request::Changes(r) => running
            .changes(r.after, Duration::from_millis(r.timeout_ms), r.sessions)
            .map(Answer::Changes)
            .map_err(|e| chain(&e)),
        Request::Explain(r) => {
            running.explain(&r.session).map(Answer::Explain).map_err(|e| chain(&e))
        }
        Request::Reload(_) => match reload {
            Some(reload) => reload(running).map(Answer::Reload),
            None => Err("this server cannot reload: restart it to change its policy".into()),
        },
    };
    match answer {
        Ok(answer) => Reply::answer(id, op, answer),
        Err(error) => Reply::error(id, Some(op), error),
    }
}

/// Answers one request line with one reply line (no newline), with no requester to cancel for
/// and no reload: for tests and simple embedders.
pub fn handle(running: &Running, line: &str) -> String {
    match parse(line) {
        Ok((id, request)) => reply(running, id, request, &Cancel::new(), None),
        Err(refused) => refused,
    }
    .to_line()
}
