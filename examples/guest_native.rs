//! The guest's side of a sandboxed evaluation run natively, to count where the guest spends
//! (callgrind attributes the guest's functions here; inside wasmtime it cannot): decode the
//! request, read the context entries the expression names, parse, evaluate, encode the tool
//! requests, decode the host's reply, encode the response. The host's side is replaced by the
//! manager's context table and a reply computed once by the native path. The guest allocates
//! with a bump allocator (freeing is nearly free there): this harness allocates with mimalloc,
//! or glibc's malloc with `FEXPR_ALLOCATOR=system`, so its counts of allocation and freeing are
//! an upper bound of the guest's.
//! `cargo build --release --example guest_native`, then
//! `valgrind --tool=callgrind target/release/examples/guest_native 'add(a=2, b=3)' 1200` and
//! `... 200`: the difference over 1,000 is one evaluation.

#[path = "../benches/common/allocator.rs"]
mod allocator;

use fexpr::sandbox::wire::{self, ContextTable, GuestInput, GuestResponse};
use fexpr::Limits;

#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let expr = args.next().unwrap_or_else(|| "add(a=2, b=3)".into());
    let n: usize = args.next().map_or(Ok(1), |n| n.parse())?;
    let manager = fexpr::demo::manager();
    let table = ContextTable::new(manager.context())?;
    // The host's reply: the tool's result, as the native path returns it.
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let native = runtime.block_on(manager.execute_func_expr(&expr));
    let reply = wire::encode(&vec![native.output.clone()])?;
    let request = wire::encode_request(&GuestInput::Expression(&expr), &Limits::default())?;
    let lookup = |key: &[u8]| table.answer(key).map(<[u8]>::to_vec);
    // The harness answers as the sandbox would: the first response must hold the native result.
    let mut host = |_: &[u8]| reply.clone();
    let first = wire::guest_evaluate(&request, &mut host, &lookup);
    match wire::decode::<GuestResponse>(&first)? {
        GuestResponse::Units(units) if units.len() == 1 => {
            let got = units.into_iter().map(|u| u.result).next();
            if got.as_ref() != Some(&native.output) {
                return Err(
                    format!("the guest's result {got:?} is not {:?}", native.output).into(),
                );
            }
        }
        other => return Err(format!("unexpected response {other:?}").into()),
    }
    let mut total = first.len();
    for _ in 1..n {
        total += wire::guest_evaluate(&request, &mut host, &lookup).len();
    }
    println!("{expr}: {n} evaluations, {total} response bytes");
    Ok(())
}
