//! Errors: a graph that cannot start ([`GraphError`]), a channel end that
//! cannot be taken ([`PortError`]), and what an actor run may return
//! ([`ActorError`], [`IntoActorResult`]).
//!
//! Every message names the actor, channel or address at fault, so that a
//! wiring mistake reads as one line.

use std::fmt;
use std::net::SocketAddr;

/// Why [`Graph::start`](crate::Graph::start) refused to start a graph.
#[derive(Debug)]
#[non_exhaustive]
pub enum GraphError {
    /// A channel has a writer but no reader: its messages would pile up
    /// forever.
    NoReader { channel: String, writer: String },
    /// A channel has a reader but no writer: its reader would wait forever.
    NoWriter { channel: String, reader: String },
    /// A channel is wired to neither end.
    Unwired { channel: String },
    /// One end of a channel was given to two actors (the channels are
    /// single-producer single-consumer).
    EndTakenTwice {
        channel: String,
        end: &'static str,
        first: String,
        second: String,
    },
    /// Two actors, or two channels, share a name.
    DuplicateName { kind: &'static str, name: String },
    /// A channel of capacity zero.
    ZeroCapacity { channel: String },
    /// An actor was declared with no body (`ActorBuilder::run` not called).
    NoBody { actor: String },
    /// A graph with no actors.
    Empty,
    /// The telemetry address is not an `ip:port` address (`reason`: what
    /// resolving it said).
    BadTelemetryAddr { addr: String, reason: String },
    /// The telemetry address is not a loopback address and remote access
    /// was not allowed with `Graph::telemetry_allow_remote`.
    NonLoopbackTelemetry { addr: SocketAddr },
    /// The telemetry server could not bind its address (in use, say).
    TelemetryBind { addr: SocketAddr, reason: String },
    /// The telemetry server's thread could not be started.
    TelemetryThread { reason: String },
    /// Ctrl-C handling could not be installed.
    CtrlC { reason: String },
    /// The actor thread of a `on_own_thread` actor could not be started.
    Thread { actor: String, reason: String },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::NoReader { channel, writer } => write!(
                f,
                "channel `{channel}` is written by actor `{writer}` but no actor reads it"
            ),
            GraphError::NoWriter { channel, reader } => write!(
                f,
                "channel `{channel}` is read by actor `{reader}` but no actor writes it"
            ),
            GraphError::Unwired { channel } => {
                write!(f, "channel `{channel}` is wired to no actor")
            }
            GraphError::EndTakenTwice {
                channel,
                end,
                first,
                second,
            } => write!(
                f,
                "channel `{channel}`: actors `{first}` and `{second}` both {end} it \
                 (channels are single-producer single-consumer; use a bundle to fan out or in)"
            ),
            GraphError::DuplicateName { kind, name } => {
                write!(f, "two {kind}s are named `{name}`")
            }
            GraphError::ZeroCapacity { channel } => {
                write!(f, "channel `{channel}` has capacity 0")
            }
            GraphError::NoBody { actor } => {
                write!(
                    f,
                    "actor `{actor}` was declared but given no body (call `run`)"
                )
            }
            GraphError::Empty => write!(f, "the graph has no actors"),
            GraphError::BadTelemetryAddr { addr, reason } => {
                write!(
                    f,
                    "telemetry address `{addr}` is not an ip:port address ({reason})"
                )
            }
            GraphError::NonLoopbackTelemetry { addr } => write!(
                f,
                "telemetry address {addr} is not a loopback address; \
                 use Graph::telemetry_allow_remote to serve other hosts"
            ),
            GraphError::TelemetryBind { addr, reason } => {
                write!(f, "telemetry server cannot bind {addr}: {reason}")
            }
            GraphError::TelemetryThread { reason } => {
                write!(f, "cannot start the telemetry server's thread: {reason}")
            }
            GraphError::CtrlC { reason } => {
                write!(f, "cannot install the Ctrl-C handler: {reason}")
            }
            GraphError::Thread { actor, reason } => {
                write!(f, "cannot start the thread of actor `{actor}`: {reason}")
            }
        }
    }
}

impl std::error::Error for GraphError {}

/// Why a channel end could not be locked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PortError {
    /// The end is held by another lock (a second `lock` in the same actor,
    /// or a helper task still holding it).
    InUse { channel: String, end: &'static str },
    /// An actor locked an end it was not wired to in the graph.
    NotWired {
        channel: String,
        end: &'static str,
        actor: String,
    },
    /// The end was closed for good: its actor stopped.
    Retired { channel: String, end: &'static str },
}

impl fmt::Display for PortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortError::InUse { channel, end } => {
                write!(f, "the {end} end of channel `{channel}` is already locked")
            }
            PortError::NotWired {
                channel,
                end,
                actor,
            } => write!(
                f,
                "actor `{actor}` locked the {end} end of channel `{channel}` \
                 without declaring it (ActorBuilder::reads / writes)"
            ),
            PortError::Retired { channel, end } => write!(
                f,
                "the {end} end of channel `{channel}` is retired: its actor stopped"
            ),
        }
    }
}

impl std::error::Error for PortError {}

/// What an actor run may fail with; any error type converts into it.
pub type ActorError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The output of an actor's future: `()` or `Result<(), E>`. An `Err`
/// counts as a failure, like a panic: the actor is restarted under its
/// [`RestartPolicy`](crate::RestartPolicy).
pub trait IntoActorResult {
    /// `Ok(())` for a normal stop.
    fn into_actor_result(self) -> Result<(), ActorError>;
}

impl IntoActorResult for () {
    fn into_actor_result(self) -> Result<(), ActorError> {
        Ok(())
    }
}

impl<E: Into<ActorError>> IntoActorResult for Result<(), E> {
    fn into_actor_result(self) -> Result<(), ActorError> {
        self.map_err(Into::into)
    }
}
