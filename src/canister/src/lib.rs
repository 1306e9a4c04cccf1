//! The tool host canister: ic-cdk glue over the engine. Every method checks its caller inside
//! the engine; `canister_inspect_message` only drops what is refused anyway, to save cycles.

use candid::{CandidType, Deserialize, Principal};
use ic_cdk::call::{Call, CallFailed};
use ic_cdk::{init, inspect_message, post_upgrade, query, update};
use ic_stable_structures::DefaultMemoryImpl;
use std::cell::{Cell, RefCell};
use std::time::Duration;
use tool_host_engine::consent::{icrc21_consent_message_request, icrc21_consent_message_response};
use tool_host_engine::runtime::{CallOutcome, Runtime};
use tool_host_engine::state::State;
use tool_host_engine::types::*;
use tool_host_engine::{
    bus, consent, lifecycle, mcp, messages, owners, registry, schedule, send, tokens, tools, views,
};

/// Talc instead of the default dlmalloc: the same flows take about a quarter fewer instructions
/// (docs/perf.md). Single-threaded wasm, so the lock is a no-op; memory grows with `memory.grow`.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
// SAFETY: the canister is single-threaded and nothing else manages the wasm heap.
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

thread_local! {
    static STATE: RefCell<Option<State<DefaultMemoryImpl>>> = const { RefCell::new(None) };
    static TIMER: Cell<Option<ic_cdk_timers::TimerId>> = const { Cell::new(None) };
}

/// The runtime on the Internet Computer.
struct Ic;

impl Runtime for Ic {
    type M = DefaultMemoryImpl;

    fn now(&self) -> u64 {
        ic_cdk::api::time()
    }
    fn self_id(&self) -> Principal {
        ic_cdk::api::canister_self()
    }
    fn is_controller(&self, p: &Principal) -> bool {
        ic_cdk::api::is_controller(p)
    }
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T {
        STATE.with_borrow_mut(|s| {
            f(s.get_or_insert_with(|| State::init(DefaultMemoryImpl::default())))
        })
    }
    async fn call(
        &self,
        canister: Principal,
        method: &str,
        arg: Vec<u8>,
        timeout_seconds: u32,
    ) -> CallOutcome {
        match Call::bounded_wait(canister, method)
            .with_raw_args(&arg)
            .change_timeout(timeout_seconds)
            .await
        {
            Ok(reply) => CallOutcome::Replied(reply.into_bytes()),
            Err(CallFailed::CallRejected(r)) => CallOutcome::Rejected {
                code: r.raw_reject_code(),
                message: r.reject_message().to_string(),
            },
            Err(CallFailed::CallPerformFailed(e)) => CallOutcome::NotSent(e.to_string()),
            Err(CallFailed::InsufficientLiquidCycleBalance(e)) => {
                CallOutcome::NotSent(e.to_string())
            }
        }
    }
    fn wake_at(&self, at_ns: u64) {
        if let Some(old) = TIMER.take() {
            ic_cdk_timers::clear_timer(old);
        }
        let delay = Duration::from_nanos(at_ns.saturating_sub(ic_cdk::api::time()));
        let id = ic_cdk_timers::set_timer(delay, async {
            TIMER.set(None);
            schedule::tick(&Ic).await;
        });
        TIMER.set(Some(id));
    }
    fn build_catalog_soon(&self) {
        ic_cdk_timers::set_timer(Duration::ZERO, async {
            Ic.with_state(|s| {
                tool_host_engine::catalog::bus(s);
            });
        });
    }
    #[cfg(feature = "trace-instructions")]
    fn mark(&self, point: &str) {
        ic_cdk::api::debug_print(format!(
            "instructions {point}: {}",
            ic_cdk::api::performance_counter(0)
        ));
    }
}

/// The install and upgrade argument (`HostArg`), read by the engine; a refusal traps, which
/// fails the install or rolls the whole upgrade back (the old code keeps running).
fn host_arg(bytes: Vec<u8>) -> Option<HostArg> {
    lifecycle::decode_host_arg(&bytes).unwrap_or_else(|e| ic_cdk::trap(e))
}

#[init(decode_with = "host_arg", hidden = true)]
fn init(arg: Option<HostArg>) {
    if let Err(why) = lifecycle::install(&Ic, arg) {
        ic_cdk::trap(why);
    }
}

/// With sends in flight the upgrade is refused (a trap here rolls the whole upgrade back, and
/// the old code keeps running with its calls): their replies would reach code that no longer
/// knows them. Upgrade a stopped canister (stop, install, start), or pass `force = opt true`.
/// The check is here, not in `pre_upgrade`, because only `canister_post_upgrade` can read the
/// upgrade argument.
#[post_upgrade(decode_with = "host_arg", hidden = true)]
fn post_upgrade(arg: Option<HostArg>) {
    if let Err(why) = lifecycle::upgrade(&Ic, arg) {
        ic_cdk::trap(why);
    }
}

fn caller() -> Principal {
    ic_cdk::api::msg_caller()
}

// Tools.

/// Every tool in `format` (MCP when absent, so a call with no argument answers as before).
#[query]
fn list_tools(format: Option<ToolFormat>) -> String {
    bus::list_tools(&Ic, format)
}

/// The tools in pages of whole tools bounded in bytes; a host with many forms and canisters
/// answers `list_tools` past the IC's reply limit, this within it (unless one tool alone is).
#[query]
fn list_tools_page(args: ListToolsArgs) -> ToolsPageResult {
    bus::list_tools_page(&Ic, args).into()
}

#[query]
fn describe_tools() -> Vec<ToolInfo> {
    bus::describe_tools(&Ic)
}

#[query]
fn select_tools(args: SelectArgs) -> ToolInfosResult {
    bus::select_tools(&Ic, caller(), args).into()
}

#[query]
fn missing_tools(names: Vec<String>) -> NamesResult {
    bus::missing_tools(&Ic, names).into()
}

#[query]
fn tool_usage(owner: Option<Principal>) -> UsageResult {
    bus::usage::tool_usage(&Ic, caller(), owner).into()
}

#[query]
fn get_builtins() -> BuiltinsView {
    bus::settings::get_builtins(&Ic)
}

#[update]
fn set_builtins(settings: BuiltinSettings) -> BuiltinsResult {
    bus::settings::set_builtins(&Ic, caller(), settings).into()
}

// Turns and escalations.

#[update]
fn begin_turn(args: BeginTurnArgs) -> BeginTurnResult {
    bus::turns::begin_turn(&Ic, caller(), args).into()
}

#[query]
fn get_turn(args: GetTurnArgs) -> TurnResult {
    bus::turns::get_turn(&Ic, caller(), args).into()
}

#[update]
fn set_escalation_handler(handler: Option<Principal>) -> UnitResult {
    bus::builtins::set_escalation_handler(&Ic, caller(), handler).into()
}

#[query]
fn get_inbox(owner: Option<Principal>) -> InboxResult {
    bus::builtins::get_inbox(&Ic, caller(), owner).into()
}

/// The hot paths' arguments: the engine's wire readers, else `candid` as ic-cdk decodes
/// (trapping on a message that does not decode, which rejects the call).
fn decode_call_tool(bytes: Vec<u8>) -> CallToolArgs {
    messages::call_tool_args(&bytes).unwrap_or_else(|| decode_or_trap(&bytes))
}

fn decode_confirm(bytes: Vec<u8>) -> ConfirmArgs {
    messages::confirm_args(&bytes).unwrap_or_else(|| decode_or_trap(&bytes))
}

fn decode_or_trap<T: CandidType + for<'de> Deserialize<'de>>(bytes: &[u8]) -> T {
    let bytes: &[u8] = if bytes.is_empty() {
        b"DIDL\x00\x00"
    } else {
        bytes
    };
    let mut config = candid::DecoderConfig::new();
    config.set_skipping_quota(10_000);
    candid::utils::decode_one_with_config(bytes, &config)
        .unwrap_or_else(|e| ic_cdk::trap(format!("the argument does not decode: {e}")))
}

/// `call_tool`'s and `confirm`'s answer, written by the engine (the bytes `candid` writes).
fn encode_tool_reply(r: Result<ToolResult, ApiError>) -> Vec<u8> {
    messages::tool_reply(&r)
}

/// The Candid signatures of the install argument, `call_tool` and `confirm` for the exported
/// interface: with their own decoders and encoders, ic-cdk would export them as blobs.
#[allow(dead_code)]
mod interface {
    use super::*;

    /// The argument as clients pass it; `host_arg` also takes none (see `HostArg`).
    #[candid::candid_method(init)]
    fn init(_: HostArg) {
        unreachable!("interface only")
    }

    #[candid::candid_method(update, rename = "call_tool")]
    fn call_tool(_: CallToolArgs) -> ToolCallResult {
        unreachable!("interface only")
    }

    #[candid::candid_method(update, rename = "confirm")]
    fn confirm(_: ConfirmArgs) -> ToolCallResult {
        unreachable!("interface only")
    }
}

#[update(
    decode_with = "decode_call_tool",
    encode_with = "encode_tool_reply",
    hidden = true
)]
async fn call_tool(args: CallToolArgs) -> Result<ToolResult, ApiError> {
    Ic.mark("call_tool: entry");
    let r = tools::call_tool(&Ic, caller(), args).await;
    Ic.mark("call_tool: returning");
    r
}

// Intents and confirmation.

#[update(
    decode_with = "decode_confirm",
    encode_with = "encode_tool_reply",
    hidden = true
)]
async fn confirm(args: ConfirmArgs) -> Result<ToolResult, ApiError> {
    Ic.mark("confirm: entry");
    send::confirm(&Ic, caller(), args).await
}

#[update]
fn decline(args: DeclineArgs) -> ToolCallResult {
    send::decline(
        &Ic,
        caller(),
        args.intent_id,
        args.digest.as_ref().map(|d| d.as_slice()),
    )
    .into()
}

#[query]
fn get_intent(id: u64) -> GetIntentResult {
    views::get_intent(&Ic, caller(), id).into()
}

#[query]
fn list_intents(args: ListIntentsArgs) -> ListIntentsResult {
    views::list_intents(&Ic, caller(), args).into()
}

// Owners.

#[update]
fn authorize_agent(agent: Principal) -> UnitResult {
    owners::authorize_agent(&Ic, caller(), agent).into()
}

#[update]
fn revoke_agent(agent: Principal) -> UnitResult {
    owners::revoke_agent(&Ic, caller(), agent).into()
}

#[query]
fn list_agents() -> PrincipalsResult {
    owners::list_agents(&Ic, caller()).into()
}

#[query]
fn deposit_account() -> DepositAccountResult {
    owners::deposit_account(&Ic, caller()).into()
}

// Agent tokens and MCP over HTTP (docs/mcp.md).

#[update]
async fn issue_agent_token(args: IssueAgentTokenArgs) -> IssueAgentTokenResult {
    tokens::issue(&Ic, caller(), args).await.into()
}

#[query]
fn list_agent_tokens() -> Vec<AgentTokenView> {
    tokens::list(&Ic, caller())
}

#[update]
fn revoke_agent_token(id: u64) -> UnitResult {
    tokens::revoke(&Ic, caller(), id).into()
}

/// The IC's HTTP gateway calls these (anonymously): the caller is the bearer token's.
#[query]
fn http_request(req: HttpRequest) -> HttpResponse {
    mcp::http_request(&Ic, req)
}

#[update]
async fn http_request_update(req: HttpRequest) -> HttpResponse {
    mcp::http_request_update(&Ic, req).await
}

// Admins.

#[update]
fn register_form(args: RegisterFormArgs) -> FormResult {
    registry::register_form(&Ic, caller(), args).into()
}

#[update]
fn remove_form(id: String) -> UnitResult {
    registry::remove_form(&Ic, caller(), id).into()
}

#[query]
fn list_forms() -> FormsResult {
    registry::list_forms(&Ic, caller()).into()
}

#[update]
async fn register_canister(args: RegisterCanisterArgs) -> TargetResult {
    registry::register_canister(&Ic, caller(), args)
        .await
        .into()
}

#[update]
fn remove_canister(id: Principal) -> UnitResult {
    registry::remove_canister(&Ic, caller(), id).into()
}

#[query]
fn list_canisters() -> TargetsResult {
    registry::list_canisters(&Ic, caller()).into()
}

#[update]
async fn refresh_refs(id: Option<Principal>) -> TargetsResult {
    registry::refresh_refs(&Ic, caller(), id).await.into()
}

#[query]
fn get_limits() -> LimitsResult {
    registry::get_limits(&Ic, caller()).into()
}

#[update]
fn set_limits(limits: Limits) -> LimitsResult {
    registry::set_limits(&Ic, caller(), limits).into()
}

#[update]
fn add_admin(admin: Principal) -> UnitResult {
    registry::add_admin(&Ic, caller(), admin).into()
}

#[update]
fn remove_admin(admin: Principal) -> UnitResult {
    registry::remove_admin(&Ic, caller(), admin).into()
}

#[query]
fn list_admins() -> PrincipalsResult {
    registry::list_admins(&Ic, caller()).into()
}

#[query]
fn stats() -> StatsResult {
    tool_host_engine::auth::user(&caller())
        .map(|()| lifecycle::stats(&Ic, ic_cdk::api::stable_size() * 65_536))
        .into()
}

// ICRC-21 and ICRC-10.

#[update]
fn icrc21_canister_call_consent_message(
    req: icrc21_consent_message_request,
) -> icrc21_consent_message_response {
    consent::consent_message(&Ic, req).into()
}

#[query]
fn icrc10_supported_standards() -> Vec<StandardRecord> {
    consent::supported_standards()
}

/// Bytes of an update's argument accepted at the door; the engine checks its own limits too.
const MAX_ARG_BYTES: usize = 80 * 1024;
const MAX_FORM_ARG_BYTES: usize = 300 * 1024;
/// `http_request_update`'s argument: the body's bound (128 KiB, `tool_host_core::mcp`), the
/// headers' (16 KiB), the URL's (2 KiB) and Candid's envelope; the engine answers 413 / 431 /
/// 414 below it, so a client sees those rather than a rejected call.
const MAX_HTTP_ARG_BYTES: usize = 160 * 1024;

/// Drops anonymous and oversized update calls before they cost cycles. Not a security
/// boundary: every method checks its caller itself.
#[inspect_message]
fn inspect_message() {
    let method = ic_cdk::api::msg_method_name();
    let anonymous = ic_cdk::api::msg_caller() == Principal::anonymous();
    // The HTTP gateway makes `http_request_update` anonymously; the bearer token inside
    // authenticates it (the engine refuses a request without one).
    if anonymous
        && method != "icrc21_canister_call_consent_message"
        && method != "http_request_update"
    {
        return;
    }
    let max = match method.as_str() {
        "register_form" => MAX_FORM_ARG_BYTES,
        "http_request_update" => MAX_HTTP_ARG_BYTES,
        _ => MAX_ARG_BYTES,
    };
    if ic_cdk::api::msg_arg_data().len() > max {
        return;
    }
    ic_cdk::api::accept_message();
}

ic_cdk::export_candid!();

#[cfg(test)]
mod tests {
    use candid_parser::utils::{service_equal, CandidSource};
    use tool_host_engine::lifecycle::decode_host_arg;
    use tool_host_engine::types::{HostArg, InitArgs, UpgradeArgs};

    /// The install and upgrade arguments the scripts and docs give, as dfx encodes them (with
    /// the .did's `HostArg`), read as the canister reads them: a typo in one would fail every
    /// deploy.
    #[test]
    fn the_documented_install_and_upgrade_arguments_read_as_host_args() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let (env, actor) = CandidSource::File(&root.join("candid/tool_host.did"))
            .load()
            .expect("the .did loads");
        let init = match actor.expect("a service").as_ref() {
            candid::types::TypeInner::Class(args, _) => args.clone(),
            other => panic!("the service takes no argument: {other:?}"),
        };
        let read = |text: &str| {
            let bytes = candid_parser::parse_idl_args(text)
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .to_bytes_with_types(&env, &init)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            decode_host_arg(&bytes).unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        let install = "(variant { Init = record { admins = vec {}; limits = null } })";
        let upgrade = "(variant { Upgrade = null })";
        let named = |force: &str| {
            format!("(variant {{ Upgrade = opt record {{ force = {force}; limits = null; add_admins = null }} }})")
        };
        assert_eq!(read(install), Some(HostArg::Init(InitArgs::default())));
        assert_eq!(read(upgrade), Some(HostArg::Upgrade(None)));
        assert_eq!(
            read(&named("opt true")),
            Some(HostArg::Upgrade(Some(UpgradeArgs {
                force: Some(true),
                ..Default::default()
            })))
        );
        for (file, text) in [
            ("scripts/deploy-local.sh", install.to_string()),
            ("docs/deploy.md", install.to_string()),
            ("docs/deploy.md", upgrade.to_string()),
            ("CHANGELOG.md", upgrade.to_string()),
            ("scripts/upgrade.sh", named("${FORCE}")),
        ] {
            let content = std::fs::read_to_string(root.join(file)).expect("reads");
            assert!(content.contains(&text), "{file} does not pass {text}");
        }
    }

    #[test]
    fn the_did_file_matches_the_exported_interface() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../candid/tool_host.did");
        let exported = super::__export_service();
        let header = "// The tool host's Candid interface. Generated from the code (UPDATE_CANDID=1 cargo test -p tool_host);\n// a test checks that the two agree. Roles, errors and limits: docs/canister.md.\n\n";
        let generated = format!("{header}{exported}");
        if std::env::var("UPDATE_CANDID").is_ok() {
            std::fs::write(&path, &generated).expect("writes the .did");
            return;
        }
        service_equal(CandidSource::Text(&exported), CandidSource::File(&path)).unwrap_or_else(|e| {
            panic!("candid/tool_host.did differs from the code: {e}\n\nthe code exports:\n{exported}")
        });
        // Equal types are not enough: generated clients use the type names, and the comments
        // are the documentation of statuses and outcomes.
        let file = std::fs::read_to_string(&path).expect("reads the .did");
        assert!(
            file == generated,
            "candid/tool_host.did has other type names or comments than the code exports \
             (UPDATE_CANDID=1 cargo test -p tool_host writes it)\n\nthe code exports:\n{exported}"
        );
    }
}
