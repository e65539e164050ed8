//! The game's modules import each other downwards only: no module of `src/game` imports one that imports it
//! back (directly or round a longer circle), and none imports from `src/game/mod.rs`, which only lists the
//! modules and the entry points. Read from the source: every `super::NAME` and `crate::game::NAME` path.
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Each module and the modules it names.
type Edges = BTreeMap<String, BTreeSet<String>>;

/// Each module of `src/game` and the modules of `src/game` its code names; plus every `(module, name)` it takes
/// from `super` that is no module (an import from mod.rs).
fn graph() -> (Edges, Vec<(String, String)>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../src/game");
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            sources.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let (mut edges, mut upward) = (BTreeMap::new(), Vec::new());
    for (module, source) in &sources {
        // A file's `mod tests` comes last; in it `super` is the file itself, so only `crate::game::` counts.
        let (body, tests) = source.split_once("mod tests {").unwrap_or((source, ""));
        let mut named = Vec::new();
        for (text, prefixes) in [(body, &["super::", "crate::game::"][..]), (tests, &["crate::game::"][..])] {
            for prefix in prefixes {
                for (at, _) in text.match_indices(prefix) {
                    let rest = &text[at + prefix.len()..];
                    if let Some(group) = rest.strip_prefix('{') {
                        let group = &group[..group.find('}').unwrap()];
                        named.extend(group.split(',').map(|n| n.trim().split("::").next().unwrap().to_string()));
                    } else {
                        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                        named.push(rest[..end].to_string());
                    }
                }
            }
        }
        let to: &mut BTreeSet<String> = edges.entry(module.clone()).or_default();
        for name in named.into_iter().filter(|n| !n.is_empty() && n != module && n != "self" && n != "*") {
            if modules.contains(&name) {
                to.insert(name);
            } else {
                upward.push((module.clone(), name));
            }
        }
    }
    (edges, upward)
}

/// The modules on a circle of imports, if any (a depth-first walk that meets a module on its own path).
fn circle(edges: &Edges) -> Option<Vec<String>> {
    fn walk(m: &str, edges: &Edges, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            return Some(path[at..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in &edges[m] {
            if let Some(c) = walk(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|m| walk(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_game_modules_import_downwards_only() {
    let (edges, upward) = graph();
    assert!(edges.len() > 10, "read {} modules of src/game", edges.len());
    for (m, to) in &edges {
        println!("{m:11} -> {}", to.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    assert_eq!(upward, vec![], "names imported from src/game/mod.rs (module, name)");
    assert_eq!(circle(&edges), None, "modules that import each other round a circle");
}

/// The checker sees a circle and an upward import when there is one.
#[test]
fn the_checker_finds_a_circle() {
    let mut edges = BTreeMap::new();
    for (a, b) in [("ai", "memory"), ("memory", "enemy"), ("enemy", "ai"), ("fixed", "enemy")] {
        edges.entry(a.to_string()).or_insert_with(BTreeSet::new).insert(b.to_string());
        edges.entry(b.to_string()).or_insert_with(BTreeSet::new);
    }
    let found = circle(&edges).expect("the circle ai -> memory -> enemy -> ai");
    assert_eq!(found.len(), 3, "{found:?}");
}
