//! Any bytes, decoded as each message the sandbox wire carries: what the host decodes from the
//! guest (its response, its batches of tool requests) and what the guest decodes from the
//! host (the request, the context entries it looks up, the tool results). Decoding errors, never panics; whatever decodes can be
//! shown and re-encoded.
#![no_main]

use fexpr::eval::ToolRequest;
use fexpr::sandbox::wire::{self, GuestRequest, GuestResponse, HostContext};
use fexpr::{Error, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Host side: the guest's answer and its host calls.
    if let Ok(response) = wire::decode::<GuestResponse>(data) {
        let _ = format!("{response:?}");
        let _ = wire::encode(&response);
        if let GuestResponse::Units(units) = &response {
            for unit in units {
                if let Ok(value) = &unit.result {
                    let _ = value.repr();
                    let _ = value.to_json();
                    let _ = value.approx_size();
                }
            }
        }
    }
    if let Ok(requests) = wire::decode::<Vec<ToolRequest>>(data) {
        for request in &requests {
            let _ = request.function().to_json();
        }
    }
    // Guest side: the request, the context entries it looks up (these bytes as every answer)
    // and the host's results.
    let _ = wire::decode::<GuestRequest>(data);
    let lookup = |_: &[u8]| Some(data.to_vec());
    let context = HostContext::new(&lookup);
    for name in ["x", "np.array", "Point", "add"] {
        let _ = fexpr::context::Resolve::get(&context, name);
    }
    let _ = fexpr::context::Resolve::names(&context);
    if let Ok(results) = wire::decode::<Vec<Result<Value, Error>>>(data) {
        for value in results.iter().flatten() {
            let _ = value.repr();
        }
    }
});
