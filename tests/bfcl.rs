//! Conformance on the Berkeley Function Calling Leaderboard (BFCL) data.
//!
//! The data comes from the `bfcl-eval` wheel on PyPI (Apache-2.0), fetched by
//! `scripts/ci-bfcl.sh` into `target/bfcl` (or set `BFCL_DATA` to its `bfcl_eval/data`
//! directory). Nothing of it is committed. Without the data these tests skip loudly, unless the
//! `CI` environment variable is set, in which case they fail.
//!
//! For every Python-language case (simple, multiple, parallel, parallel_multiple and the live_*
//! variants) the ground-truth call expression is written from the first acceptable value of
//! each argument (BFCL's `""` means "may be omitted") and checked with `fexpr::check` against
//! the case's function docs: every call must be valid and carry exactly the expected arguments.
//! The cases whose data cannot be satisfied are listed in [`UNSATISFIABLE`] with the reason;
//! the test fails if that list is wrong in either direction. The irrelevance cases' user
//! prompts (prose) must yield no calls.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::check::check_text;
use fexpr::repair::RepairOptions;
use fexpr::{Limits, Value};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The Python-language categories with ground truth.
const CATEGORIES: &[&str] = &[
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
];

/// Cases whose ground truth cannot be satisfied by any call against their own function docs,
/// with the reason (fexpr's error on the ground truth). Checked both ways: each must fail, and
/// nothing else may. They are of five kinds: a value outside the parameter's `enum` (`'N/A'`,
/// `False` for `['True', 'False', 'dontcare']`, an int for a string enum), a value of another
/// type (`'dontcare'` for an int, `'apple'` for a list of ints, `True` for a str), an argument
/// the docs do not have, a required argument missing, and dict keys that are not among the
/// nested object's `properties`.
const UNSATISFIABLE: &[(&str, &str)] = &[
    ("live_multiple_189-83-0", "sendHttpRequest: Type: `data` expects object | None, got dict of 2"),
    ("live_multiple_190-84-0", "game_rewards.get: Type: `trophy` expects Literal['bronze', 'silver', 'gold', 'platinum', None], got str 'all levels'"),
    ("live_multiple_301-131-0", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_302-131-1", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_303-131-2", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_304-131-3", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_306-131-5", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_307-131-6", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_308-131-7", "Hotels_4_SearchHotel: Type: `smoking_allowed` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_338-133-2", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_342-133-6", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_343-133-7", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_344-133-8", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_345-133-9", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_350-133-14", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_351-133-15", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_352-133-16", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_354-133-18", "Music_3_LookupMusic: Type: `year` expects int | None, got str 'dontcare'"),
    ("live_multiple_414-141-3", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', None], got str 'dontcare'"),
    ("live_multiple_416-141-5", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', None], got str 'dontcare'"),
    ("live_multiple_417-141-6", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', None], got str 'dontcare'"),
    ("live_multiple_421-141-10", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', None], got str 'dontcare'"),
    ("live_multiple_424-141-13", "Movies_1_FindMovies: Type: `show_type` expects Literal['regular', '3d', 'imax', None], got str 'dontcare'"),
    ("live_multiple_427-141-16", "Movies_1_FindMovies: Type: `show_type` expects Literal['regular', '3d', 'imax', None], got str 'dontcare'"),
    ("live_multiple_431-141-20", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', None], got str 'dontcare'"),
    ("live_multiple_433-141-22", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', None], got str 'dontcare'"),
    ("live_multiple_507-149-4", "Flights_4_SearchOnewayFlight: Arguments: Flights_4_SearchOnewayFlight() missing 1 required argument: `origin_airport`"),
    ("live_multiple_552-153-1", "Services_1_FindProvider: Type: `is_unisex` expects Literal['True', 'False', 'dontcare', None], got bool True"),
    ("live_multiple_553-153-2", "Services_1_FindProvider: Type: `is_unisex` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_595-158-1", "Hotels_4_SearchHotel: Type: `number_of_rooms` expects Literal['1', '2', '3', 'dontcare', None], got int 2"),
    ("live_multiple_596-158-2", "Hotels_4_SearchHotel: Type: `number_of_rooms` expects Literal['1', '2', '3', 'dontcare', None], got int 1"),
    ("live_multiple_731-167-2", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool True"),
    ("live_multiple_732-167-3", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_733-167-4", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool True"),
    ("live_multiple_734-167-5", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_735-167-6", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool True"),
    ("live_multiple_736-167-7", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_737-167-8", "Homes_2_FindHomeByArea: Type: `in_unit_laundry` expects Literal['True', 'False', 'dontcare', None], got bool False"),
    ("live_multiple_750-169-5", "Media_3_FindMovies: Type: `genre` expects Literal['World', 'Fantasy', 'Offbeat', 'Mystery', 'Musical', 'Thriller', 'Comedy', 'Comedy-drama', 'Horror', 'Animation', 'Cult', 'Sci-fi', 'War', 'Drama', 'Anime', 'Family', 'Action'], got str 'Any'"),
    ("live_multiple_756-169-11", "Media_3_FindMovies: Type: `genre` expects Literal['World', 'Fantasy', 'Offbeat', 'Mystery', 'Musical', 'Thriller', 'Comedy', 'Comedy-drama', 'Horror', 'Animation', 'Cult', 'Sci-fi', 'War', 'Drama', 'Anime', 'Family', 'Action'], got str 'horror'"),
    ("live_multiple_835-178-10", "Music_3_LookupMusic: Type: `genre` expects Literal['Reggae', 'Holiday', 'Electropop', 'Pop', 'Asia', 'House', 'Electronica', 'Funk', 'Rock', 'Metal', 'Dubstep', 'Country', 'dontcare', None], got str 'Reggaeton'"),
    ("live_multiple_848-179-2", "Restaurants_2_FindRestaurants: Type: `price_range` expects Literal['cheap', 'moderate', 'pricey', 'ultra high-end', None], got str 'dontcare'"),
    ("live_multiple_851-179-5", "Restaurants_2_FindRestaurants: Type: `price_range` expects Literal['cheap', 'moderate', 'pricey', 'ultra high-end', None], got str 'dontcare'"),
    ("live_multiple_862-181-3", "Trains_1_FindTrains: Arguments: Trains_1_FindTrains() got an unexpected keyword argument `journey_start_time`"),
    ("live_multiple_87-38-4", "list_servers: Type: `type` expects Literal['all', 'postgres', 'openapi', 'graphql', None], got str 'openai'"),
    ("live_multiple_871-182-8", "Movies_1_FindMovies: Type: `genre` expects Literal['World', 'Offbeat', 'Mystery', 'Supernatural', 'Horror', 'Animation', 'Sci-fi', 'Documentary', 'Drama', 'War', 'Family', 'Action', 'dontcare', None], got str 'Play'"),
    ("live_multiple_947-197-0", "set_countdown: Type: `duration` expects Literal['1 hour', '30 minutes', '1 hour 30 minutes', '45 minutes', '2 hours'], got str '5 minutes'"),
    ("live_multiple_956-203-0", "partner.mandates: Type: `status` expects Literal['active', 'pending', 'inactive', None], got str 'all'"),
    ("live_multiple_964-207-0", "transfer_to_human_agent: Arguments: transfer_to_human_agent() got an unexpected keyword argument `question`"),
    ("live_parallel_15-11-0", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_parallel_multiple_2-2-0", "ControlAppliance.execute: Type: `command` expects Literal['거실, 에어컨, 실행', ', 에어컨, 냉방 실행', '다용도실, 통돌이, 중지'], got str '침실, 공기청정기, 중지'"),
    ("live_simple_106-63-0", "record: Arguments: record() missing 2 required arguments: `auto_loan_payment_start`, `bank_hours_start`"),
    ("live_simple_112-68-0", "record: Arguments: record() missing 5 required arguments: `acc_routing_start`, `atm_finder_start`, `faq_link_accounts_start`, `get_balance_start`, `get_transactions_start`"),
    ("live_simple_141-94-0", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_142-94-1", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_143-95-0", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_144-95-1", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_145-95-2", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_146-95-3", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_147-95-4", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_148-95-5", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_149-95-6", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_150-95-7", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_151-95-8", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_152-95-9", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_153-95-10", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_154-95-11", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_155-95-12", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_156-95-13", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_157-95-14", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_158-95-15", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_159-95-16", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("live_simple_160-95-17", "cmd_controller.execute: Type: `unit` expects Literal['seconds', 'milliseconds', None], got str 'N/A'"),
    ("parallel_multiple_12", "calculate_voltage_difference: Arguments: calculate_voltage_difference() got an unexpected keyword argument `permeability`"),
    ("parallel_multiple_21", "linear_regression_fit: Type: `x[0]` expects float, got str 'data['sales']'"),
    ("parallel_multiple_26", "bank.calculate_balance: Arguments: bank.calculate_balance() got an unexpected keyword argument `type`"),
    ("parallel_multiple_94", "sort_list: Type: `elements[0]` expects int, got str 'apple'"),
    ("simple_python_307", "game_result.get_winner: Type: `venue` expects str | None, got bool True"),
];

/// Irrelevance prompts that themselves contain a call to one of the case's tools, written out
/// in the prompt; finding it is right. Checked both ways.
const PROMPTS_WITH_CALLS: &[(&str, &str)] = &[
    (
        "live_irrelevance_421-99-0",
        "the user message is itself a call to the tool `record(type='dict', ...)`",
    ),
    (
        "live_irrelevance_456-123-0",
        "a code block in the message calls the tool inside other code (`import re`, \
         assignments): one rejected item, nothing in it runs",
    ),
];

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

/// The `bfcl_eval/data` directory, or `None` (after saying so loudly) when it is absent.
fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("BFCL_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bfcl/bfcl_eval/data"),
        PathBuf::from,
    );
    if dir.join("BFCL_v4_simple_python.json").is_file() {
        return Some(dir);
    }
    let msg = format!(
        "BFCL data not found at {} — run scripts/ci-bfcl.sh (or set BFCL_DATA)",
        dir.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("\n*** SKIPPED: {msg} ***\n");
    None
}

fn read_lines(path: &std::path::Path) -> Vec<Json> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// One case: id, function docs, and the expected calls (name, arguments).
struct Case {
    id: String,
    functions: Json,
    expected: Vec<(String, Vec<(String, Json)>)>,
}

fn cases(dir: &std::path::Path, category: &str) -> Vec<Case> {
    let questions = read_lines(&dir.join(format!("BFCL_v4_{category}.json")));
    let answers = read_lines(&dir.join(format!("possible_answer/BFCL_v4_{category}.json")));
    let answers: BTreeMap<String, Json> = answers
        .into_iter()
        .map(|a| {
            (
                a["id"].as_str().unwrap().to_string(),
                a["ground_truth"].clone(),
            )
        })
        .collect();
    questions
        .into_iter()
        .map(|q| {
            let id = q["id"].as_str().unwrap().to_string();
            let truth = answers
                .get(&id)
                .unwrap_or_else(|| panic!("no answer for {id}"));
            let expected = truth
                .as_array()
                .unwrap()
                .iter()
                .map(|call| {
                    let (name, params) = call.as_object().unwrap().iter().next().unwrap();
                    let args = params
                        .as_object()
                        .unwrap()
                        .iter()
                        .filter_map(|(param, values)| {
                            // The first acceptable value; "" means the argument may be omitted.
                            values
                                .as_array()
                                .unwrap()
                                .iter()
                                .find(|v| *v != &Json::String(String::new()))
                                .map(|v| (param.clone(), first_acceptable(v)))
                        })
                        .collect();
                    (name.clone(), args)
                })
                .collect();
            Case {
                id,
                functions: q["function"].clone(),
                expected,
            }
        })
        .collect()
}

/// A value with BFCL's nested alternatives resolved: inside a dict, each value is a list of
/// acceptable values, of which the first is taken ("" = may be omitted).
fn first_acceptable(v: &Json) -> Json {
    match v {
        Json::Object(map) => Json::Object(
            map.iter()
                .filter_map(|(k, alts)| match alts {
                    Json::Array(alts) => alts
                        .iter()
                        .find(|a| *a != &Json::String(String::new()))
                        .map(|a| (k.clone(), first_acceptable(a))),
                    other => Some((k.clone(), first_acceptable(other))),
                })
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(first_acceptable).collect()),
        other => other.clone(),
    }
}

/// The ground-truth calls as one Python list expression.
fn expression(case: &Case) -> String {
    let calls: Vec<String> = case
        .expected
        .iter()
        .map(|(name, args)| {
            let args: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{k}={}", Value::from_json(v).repr()))
                .collect();
            format!("{name}({})", args.join(", "))
        })
        .collect();
    format!("[{}]", calls.join(", "))
}

/// Whether the checked arguments `got` are the expected `want`, numbers compared as numbers
/// (`5` and `5.0` are the same value).
fn same(got: &Json, want: &Json) -> bool {
    match (got, want) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && y.iter().all(|(k, w)| x.get(k).is_some_and(|v| same(v, w)))
        }
        _ => got == want,
    }
}

/// Why `case` fails, or `None` when every expected call is accepted as expected.
fn failure(case: &Case, repairs: &mut usize) -> Option<String> {
    let defs = match fexpr::tooldefs::from_json(&case.functions) {
        Ok(defs) => defs,
        Err(e) => return Some(format!("function docs: {e}")),
    };
    let ctx = fexpr::tooldefs::context(&defs);
    let text = expression(case);
    let checked = check_text(&text, &ctx, &Limits::default(), &RepairOptions::default());
    if checked.verdicts.len() != case.expected.len() {
        return Some(format!(
            "{} calls found, {} expected; ignored: {:?}",
            checked.verdicts.len(),
            case.expected.len(),
            checked.ignored
        ));
    }
    for (verdict, (name, args)) in checked.verdicts.iter().zip(&case.expected) {
        if let Some(e) = &verdict.error {
            return Some(format!("{name}: {e}"));
        }
        if &verdict.name != name {
            return Some(format!("name {} != {name}", verdict.name));
        }
        *repairs += verdict.repairs.len();
        let got = verdict.to_json()["kwargs"].clone();
        let want = Json::Object(args.iter().cloned().collect());
        if !same(&got, &want) {
            return Some(format!("{name}: kwargs {got} != {want}"));
        }
    }
    None
}

#[test]
fn ground_truth_is_accepted() {
    let Some(dir) = data_dir() else { return };
    let mut failures = BTreeMap::new();
    let (mut total, mut calls, mut repairs) = (0, 0, 0);
    for category in CATEGORIES {
        let cases = cases(&dir, category);
        assert!(!cases.is_empty(), "{category}: no cases");
        for case in &cases {
            total += 1;
            calls += case.expected.len();
            if let Some(why) = failure(case, &mut repairs) {
                failures.insert(case.id.clone(), why);
            }
        }
    }
    eprintln!(
        "BFCL ground truth: {total} cases, {calls} calls, {} unsatisfiable, {repairs} repairs",
        failures.len()
    );
    let listed: BTreeMap<&str, &str> = UNSATISFIABLE.iter().copied().collect();
    let unexpected: Vec<String> = failures
        .iter()
        .filter(|(id, _)| !listed.contains_key(id.as_str()))
        .map(|(id, why)| format!("(\"{id}\", \"{}\"),", why.replace('"', "'")))
        .collect();
    let now_passing: Vec<&&str> = listed
        .keys()
        .filter(|id| !failures.contains_key(**id))
        .collect();
    assert!(
        unexpected.is_empty() && now_passing.is_empty(),
        "{} unexpected failures:\n{}\nlisted as unsatisfiable but accepted: {now_passing:?}",
        unexpected.len(),
        unexpected.join("\n")
    );
}

#[test]
fn irrelevance_prose_yields_no_calls() {
    let Some(dir) = data_dir() else { return };
    let mut checked_prompts = 0;
    let mut wrong = Vec::new();
    for category in ["irrelevance", "live_irrelevance"] {
        for case in read_lines(&dir.join(format!("BFCL_v4_{category}.json"))) {
            let id = case["id"].as_str().unwrap();
            let defs = fexpr::tooldefs::from_json(&case["function"]).unwrap();
            let ctx = fexpr::tooldefs::context(&defs);
            for turn in case["question"].as_array().unwrap() {
                for message in turn.as_array().unwrap() {
                    let Some(text) = message["content"].as_str() else {
                        continue;
                    };
                    let found =
                        check_text(text, &ctx, &Limits::default(), &RepairOptions::default());
                    let listed = PROMPTS_WITH_CALLS.iter().any(|(p, _)| *p == id);
                    if found.verdicts.is_empty() == listed {
                        wrong.push(format!(
                            "{id}: {} calls: {:?}",
                            found.verdicts.len(),
                            found
                                .verdicts
                                .iter()
                                .map(|v| clip(&v.input))
                                .collect::<Vec<_>>()
                        ));
                    }
                    checked_prompts += 1;
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!("BFCL irrelevance: {checked_prompts} prompts, no calls");
    assert!(checked_prompts > 1000);
}
