//! `#[spindle::main]` and `#[spindle::test]`: run an `async fn` on a fresh
//! runtime.
//!
//! ```ignore
//! #[spindle::main]                       // multi-thread, default workers
//! async fn main() { .. }
//!
//! #[spindle::main(workers = 4)]
//! #[spindle::test(flavor = "current_thread")]
//! #[spindle::test(start_paused = true)]    // the clock paused (spindle::time::pause)
//! #[spindle::test(deterministic)]          // seeded schedule: SPINDLE_SEED, else seed 1
//! #[spindle::test(seed = 42)]              // seeded schedule with this seed
//! ```
//!
//! Written on `proc_macro` alone (no syn/quote) to keep builds fast: the
//! item's tokens are kept as they are, except that `async` is removed from
//! the signature and the body is wrapped in `block_on(async move { .. })`.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Runs `async fn main` on a spindle runtime.
///
/// Arguments: `workers = N`, `flavor = "multi_thread" | "current_thread"`.
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args, item, false)
}

/// Runs an `async fn` test on a fresh spindle runtime (current-thread by
/// default, like a unit test; `flavor = "multi_thread"` and `workers = N`
/// are accepted, and `start_paused = true` on the current-thread flavor
/// starts it with its clock paused). `deterministic` or `seed = N` runs it
/// on `Builder::new_deterministic` (seed `N`, else `SPINDLE_SEED`, else 1).
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args, item, true)
}

struct Config {
    workers: Option<String>,
    current_thread: bool,
    start_paused: bool,
    /// A deterministic runtime: `Some(None)` takes the seed from the
    /// environment, `Some(Some(n))` is `seed = n`.
    deterministic: Option<Option<String>>,
}

/// One `key = value` argument of the attribute.
struct Arg {
    key: Ident,
    /// A literal, or `true` / `false` (which are identifiers); `None` for
    /// a bare flag (`deterministic`).
    value: Option<TokenTree>,
}

impl Config {
    /// The expression that makes the runtime's `Builder`.
    fn builder(&self) -> String {
        match (&self.workers, self.current_thread, &self.deterministic) {
            (_, _, Some(Some(seed))) => format!("::spindle::Builder::new_deterministic({seed}u64)"),
            (_, _, Some(None)) => {
                "::spindle::Builder::new_deterministic(::spindle::test::seed_from_env(1))".into()
            }
            (_, true, None) if self.start_paused => {
                "::spindle::Builder::new_current_thread().start_paused(true)".into()
            }
            (_, true, None) => "::spindle::Builder::new_current_thread()".into(),
            (Some(n), false, None) => {
                format!("::spindle::Builder::new_multi_thread().workers({n})")
            }
            (None, false, None) => "::spindle::Builder::new_multi_thread()".into(),
        }
    }
}

/// The arguments as written, each `None` when not given.
#[derive(Default)]
struct Given {
    workers: Option<String>,
    /// Some(true): "current_thread"; None: the default (current-thread
    /// for tests, multi-thread for main).
    flavor: Option<bool>,
    start_paused: Option<bool>,
    /// `Some(None)`: `deterministic`; `Some(Some(n))`: `seed = n`.
    deterministic: Option<Option<String>>,
}

fn parse_args(args: TokenStream, is_test: bool) -> Result<Config, (Span, String)> {
    let mut given = Given::default();
    for arg in split_args(args)? {
        given.take(arg)?;
    }
    given.check(is_test)
}

impl Given {
    /// Records one argument, refusing an unknown or repeated one.
    fn take(&mut self, Arg { key, value }: Arg) -> Result<(), (Span, String)> {
        let twice = || Err((key.span(), format!("`{key}` is given twice")));
        let name = key.to_string();
        if name == "deterministic" && value.is_none() {
            if self.deterministic.is_some() {
                return twice();
            }
            self.deterministic = Some(None);
            return Ok(());
        }
        let Some(value) = value else {
            return Err((key.span(), format!("expected `=` after `{key}`")));
        };
        match name.as_str() {
            "workers" if self.workers.is_some() => return twice(),
            "workers" => self.workers = Some(parse_workers(&value)?),
            "flavor" if self.flavor.is_some() => return twice(),
            "flavor" => self.flavor = Some(parse_flavor(&value)?),
            "start_paused" if self.start_paused.is_some() => return twice(),
            "start_paused" => self.start_paused = Some(parse_bool(&key, &value)?),
            "seed" if self.deterministic.is_some() => {
                let both = "`seed` and `deterministic` are given both";
                return Err((key.span(), both.into()));
            }
            "seed" => self.deterministic = Some(Some(parse_seed(&value)?)),
            other => {
                return Err((
                    key.span(),
                    format!(
                        "unknown argument `{other}`: use `workers`, `flavor`, `start_paused`, \
                         `deterministic` or `seed`"
                    ),
                ))
            }
        }
        Ok(())
    }

    /// The configuration, if the arguments fit together.
    fn check(self, is_test: bool) -> Result<Config, (Span, String)> {
        let refuse = |msg: &str| Err((Span::call_site(), msg.to_string()));
        // `workers` alone means multi-thread for main; a test (current-
        // thread by default) must say so. A current-thread flavor never
        // takes `workers`, in whichever order the two are written.
        let current_thread = self.flavor.unwrap_or(is_test);
        if current_thread && self.workers.is_some() {
            return refuse("`workers` needs flavor = \"multi_thread\"");
        }
        if self.deterministic.is_some() && (self.flavor == Some(false) || self.workers.is_some()) {
            return refuse("a deterministic test runs on one thread: drop `flavor` and `workers`");
        }
        let start_paused = self.start_paused.unwrap_or(false);
        if start_paused && !current_thread {
            return refuse(
                "`start_paused = true` needs the current-thread flavor: a multi-thread \
                 runtime's clock cannot be paused",
            );
        }
        Ok(Config {
            workers: self.workers,
            current_thread,
            start_paused,
            deterministic: self.deterministic,
        })
    }
}

/// The attribute's `key = literal` pairs, separated by commas.
fn split_args(args: TokenStream) -> Result<Vec<Arg>, (Span, String)> {
    let tokens: Vec<TokenTree> = args.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let key = match &tokens[i] {
            TokenTree::Ident(id) => id.clone(),
            other => {
                return Err((
                    other.span(),
                    "expected `workers = N` or `flavor = \"...\"`".into(),
                ))
            }
        };
        match tokens.get(i + 1) {
            Some(TokenTree::Punct(p)) if p.as_char() == '=' => {}
            // A bare flag: the next token, if any, must be a comma.
            None => {
                out.push(Arg { key, value: None });
                break;
            }
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {
                out.push(Arg { key, value: None });
                i += 2;
                continue;
            }
            _ => return Err((key.span(), format!("expected `=` after `{key}`"))),
        }
        let value = match tokens.get(i + 2) {
            Some(v @ (TokenTree::Literal(_) | TokenTree::Ident(_))) => v.clone(),
            _ => return Err((key.span(), format!("expected a value after `{key} =`"))),
        };
        out.push(Arg {
            key,
            value: Some(value),
        });
        i += 3;
        match tokens.get(i) {
            None => {}
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => i += 1,
            Some(other) => return Err((other.span(), "expected `,` between arguments".into())),
        }
    }
    Ok(out)
}

/// `seed = N`: a whole number, kept as written.
fn parse_seed(value: &TokenTree) -> Result<String, (Span, String)> {
    let value = literal(value, "a whole number")?;
    let v = value.to_string();
    match v.parse::<u64>() {
        Ok(_) => Ok(v),
        Err(_) => Err((
            value.span(),
            format!("`seed` must be a whole number, got {v}"),
        )),
    }
}

/// `start_paused = true | false`.
fn parse_bool(key: &Ident, value: &TokenTree) -> Result<bool, (Span, String)> {
    match value.to_string().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err((
            value.span(),
            format!("`{key}` must be `true` or `false`, got {other}"),
        )),
    }
}

/// The value as a literal, or an error naming `what` it should be.
fn literal<'a>(value: &'a TokenTree, what: &str) -> Result<&'a Literal, (Span, String)> {
    match value {
        TokenTree::Literal(l) => Ok(l),
        other => Err((other.span(), format!("expected {what}, got {other}"))),
    }
}

/// `workers = N`: a positive integer, kept as written.
fn parse_workers(value: &TokenTree) -> Result<String, (Span, String)> {
    let value = literal(value, "a positive integer")?;
    let v = value.to_string();
    match v.parse::<usize>() {
        Ok(n) if n > 0 => Ok(v),
        _ => Err((
            value.span(),
            format!("`workers` must be a positive integer, got {v}"),
        )),
    }
}

/// `flavor = "..."`: whether it is the current-thread one.
fn parse_flavor(value: &TokenTree) -> Result<bool, (Span, String)> {
    let value = literal(value, "\"multi_thread\" or \"current_thread\"")?;
    match value.to_string().as_str() {
        "\"multi_thread\"" => Ok(false),
        "\"current_thread\"" => Ok(true),
        other => Err((
            value.span(),
            format!("unknown flavor {other}: use \"multi_thread\" or \"current_thread\""),
        )),
    }
}

fn expand(args: TokenStream, item: TokenStream, is_test: bool) -> TokenStream {
    let cfg = match parse_args(args, is_test) {
        Ok(c) => c,
        Err((span, msg)) => return compile_error(span, &msg),
    };
    let mut tokens: Vec<TokenTree> = item.into_iter().collect();
    let Some(async_pos) = tokens
        .iter()
        .position(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "async"))
    else {
        let span = tokens.first().map_or(Span::call_site(), |t| t.span());
        return compile_error(span, "#[spindle::main]/#[spindle::test] need an `async fn`");
    };
    tokens.remove(async_pos);
    let Some(TokenTree::Group(body)) = tokens.pop() else {
        return compile_error(Span::call_site(), "expected a function body");
    };
    if body.delimiter() != Delimiter::Brace {
        return compile_error(body.span(), "expected a function body");
    }
    let builder = cfg.builder();
    let runner: TokenStream = format!(
        "{builder}.build().unwrap_or_else(|e| panic!(\"failed to start the spindle runtime: {{}}\", e)).block_on"
    )
    .parse()
    .expect("valid tokens");
    let mut async_block = TokenStream::new();
    async_block.extend([
        TokenTree::Ident(Ident::new("async", body.span())),
        TokenTree::Ident(Ident::new("move", body.span())),
        TokenTree::Group(body.clone()),
    ]);
    let mut call = runner;
    call.extend([TokenTree::Group(Group::new(
        Delimiter::Parenthesis,
        async_block,
    ))]);
    let mut new_body = Group::new(Delimiter::Brace, call);
    new_body.set_span(body.span());
    let mut out = TokenStream::new();
    if is_test {
        out.extend(
            "#[::core::prelude::v1::test]"
                .parse::<TokenStream>()
                .expect("valid tokens"),
        );
    }
    out.extend(tokens);
    out.extend([TokenTree::Group(new_body)]);
    out
}

fn compile_error(span: Span, msg: &str) -> TokenStream {
    let mut ts: TokenStream = format!("::core::compile_error!({msg:?});")
        .parse()
        .expect("valid tokens");
    ts = ts
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect();
    let _ = Punct::new(';', Spacing::Alone);
    ts
}
