//! The library's top-level modules import each other without a circle (see "Layers" in the
//! crate docs): read from the sources, so that an import added anywhere is checked the day
//! it is written.
//!
//! Every `crate::…` and `super::…` path of a module's code (its `use` trees expanded) is an
//! edge to the top-level module it names. Comments, strings, `#[cfg(test)]` items and the
//! files they declare are not code the library runs, nor is `testing.rs` (test support):
//! tests may reach up a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A reference from one top-level module to another: where it is and the path written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reference {
    file: String,
    line: usize,
    path: String,
}

/// Edges between top-level modules, with the references that make each.
type Graph = BTreeMap<String, BTreeMap<String, Vec<Reference>>>;

/// Modules that are test support, not library code.
const TEST_SUPPORT: &[&str] = &["testing"];

#[test]
fn the_top_level_modules_import_each_other_without_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_tree(&src);
    let graph = graph(&files);
    // A check that reads nothing passes: make sure it read the crate.
    assert!(graph.len() > 15, "only {} top-level modules under {}", graph.len(), src.display());
    assert!(graph["engine"].contains_key("decide"), "engine -> decide not seen: {graph:#?}");
    let circles = circles(&graph);
    assert!(circles.is_empty(), "{}", describe(&graph, &circles));
}

#[test]
fn a_circle_is_found_and_named() {
    let files = vec![
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n#[cfg(test)]\nmod testing;"),
        ("a.rs", "use crate::{b::{B, self}, c::C};\n"),
        ("b/mod.rs", "mod inner;\n#[cfg(test)]\nmod tests;\n"),
        ("b/inner.rs", "fn f() -> super::super::a::A { todo!() }\n"),
        ("b/tests.rs", "use crate::c::C;\n"),
        ("c.rs", "// crate::a::A in a comment\nconst S: &str = \"crate::a\";\n"),
        ("testing.rs", "use crate::a::A;\n"),
    ];
    let files: Vec<(PathBuf, String)> =
        files.into_iter().map(|(p, s)| (PathBuf::from(p), s.to_owned())).collect();
    let graph = graph(&files);
    let targets = |m: &str| graph[m].keys().cloned().collect::<Vec<_>>();
    assert_eq!(targets("a"), ["b", "c"]);
    assert_eq!(targets("b"), ["a"], "super::super from b/inner.rs is crate::a; tests are not");
    assert!(targets("c").is_empty(), "comments and strings are not code");
    assert!(!graph.contains_key("testing"), "test support is not library code");
    let circles = circles(&graph);
    assert_eq!(circles, [vec!["a".to_owned(), "b".to_owned()]]);
    let said = describe(&graph, &circles);
    assert!(said.contains("a -> b") && said.contains("b -> a") && said.contains("b/inner.rs:1"));
}

#[test]
fn cfg_test_items_inline_are_skipped() {
    let source = "use crate::x::X;\n#[cfg(test)]\nmod tests {\n    use crate::y::{Y, Z};\n    fn f() { let _ = crate::z::Z; }\n}\n#[cfg(test)]\nuse crate::w::{W};\nfn g() -> crate::v::V {}\n";
    let mut files = vec![(PathBuf::from("m.rs"), source.to_owned())];
    files.extend(
        ["v", "w", "x", "y", "z"].map(|m| (PathBuf::from(format!("{m}.rs")), String::new())),
    );
    let graph = graph(&files);
    let targets: Vec<&String> = graph["m"].keys().collect();
    assert_eq!(targets, ["v", "x"]);
}

/// Every `.rs` file under `root`, relative to it.
fn read_tree(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(root).unwrap().to_owned(), text));
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file: `decide/mod.rs` is `[decide]`, `decide/rules.rs` is
/// `[decide, rules]`, `lib.rs` is `[]`.
fn module_path(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> =
        file.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The graph of the top-level modules of `files` (a crate's `src/`).
fn graph(files: &[(PathBuf, String)]) -> Graph {
    let mut code = BTreeMap::new();
    let mut test_files = BTreeSet::new();
    for (file, text) in files {
        let (text, test_mods) = without_tests(&blank_comments_and_strings(text));
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs") => file.parent().unwrap_or(Path::new("")).to_owned(),
            _ => file.with_extension(""),
        };
        for name in test_mods {
            test_files.insert(dir.join(format!("{name}.rs")));
            test_files.insert(dir.join(&name));
        }
        code.insert(file.clone(), text);
    }
    let is_test = |file: &Path| file.ancestors().any(|a| test_files.contains(a));
    let mut graph = Graph::new();
    for (file, text) in &code {
        let module = module_path(file);
        let Some(top) = module.first() else { continue };
        if TEST_SUPPORT.contains(&top.as_str()) || is_test(file) {
            continue;
        }
        let edges = graph.entry(top.clone()).or_default();
        for (path, line) in references(text) {
            let Some(target) = resolve(&module, &path) else { continue };
            if target != *top && code_has_module(&code, &target) {
                let at = Reference { file: file.display().to_string(), line, path };
                edges.entry(target).or_default().push(at);
            }
        }
    }
    graph
}

/// Whether `name` is a top-level module of the crate (not a name a path merely starts with,
/// like `crate::format`, a re-exported crate).
fn code_has_module(code: &BTreeMap<PathBuf, String>, name: &str) -> bool {
    code.contains_key(Path::new(&format!("{name}.rs")))
        || code.contains_key(&Path::new(name).join("mod.rs"))
}

/// The top-level module `path` (as written in `module`) names, if any.
fn resolve(module: &[String], path: &str) -> Option<String> {
    let mut segments = path.split("::").filter(|s| !s.is_empty());
    match segments.next()? {
        "crate" => segments.next().map(str::to_owned),
        "super" => {
            let mut at = module.to_vec();
            at.pop();
            let mut rest: Vec<&str> = segments.collect();
            while rest.first() == Some(&"super") {
                at.pop();
                rest.remove(0);
            }
            at.first().cloned().or_else(|| rest.first().map(|s| (*s).to_owned()))
        }
        _ => None,
    }
}

/// Every `crate::…`/`super::…` path of `code`, `use` trees expanded, with its line.
fn references(code: &str) -> Vec<(String, usize)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut rest = code.to_owned();
    // `use` declarations first, blanked once read.
    let mut from = 0;
    while let Some(found) = find_word(&rest, "use", from) {
        let tail = rest[found + 3..].trim_start();
        let Some(end) = rest[found..].find(';').map(|e| found + e) else { break };
        if tail.starts_with("crate") || tail.starts_with("super") {
            let tree = &rest[found + 3..end];
            for path in expand(tree) {
                out.push((path, line_of(found)));
            }
            let blank: String =
                rest[found..end].chars().map(|c| if c == '\n' { c } else { ' ' }).collect();
            rest.replace_range(found..end, &blank);
        }
        from = found + 3;
    }
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = find_word(&rest, start.trim_end_matches("::"), from) {
            from = found + 1;
            if !rest[found..].starts_with(start) {
                continue;
            }
            let len = rest[found..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len() - found);
            out.push((rest[found..found + len].to_owned(), line_of(found)));
        }
    }
    out
}

/// Where `word` starts as a whole word in `text`, from `from`.
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut at = from;
    while let Some(i) = text.get(at..)?.find(word) {
        let i = at + i;
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        if !ident(before) && !ident(after) && before != Some(':') {
            return Some(i);
        }
        at = i + word.len();
    }
    None
}

/// The paths a `use` tree names: `crate::{a::{B, C}, d}` is `crate::a::B`, `crate::a::C`,
/// `crate::d`.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        // `crate::a::B as C` names `crate::a::B`.
        return tree.split_whitespace().next().map(str::to_owned).into_iter().collect();
    };
    let prefix: String = tree[..open].chars().filter(|c| !c.is_whitespace()).collect();
    let prefix = prefix.trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for path in expand(part) {
            out.push(if prefix.is_empty() { path } else { format!("{prefix}::{path}") });
        }
    }
    out
}

/// `text` with comments, strings and character literals blanked (newlines kept).
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, s: &[char]| {
        out.extend(s.iter().map(|c| if *c == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let starts = |s: &str| rest.iter().take(s.len()).copied().eq(s.chars());
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let end = if starts("//") {
            rest.iter().position(|c| *c == '\n').unwrap_or(rest.len())
        } else if starts("/*") {
            find(rest, 2, "*/").map_or(rest.len(), |e| e + 2)
        } else if starts("r\"") || starts("r#") && !ident_before {
            let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
            if rest.get(1 + hashes) != Some(&'"') {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            find(rest, 2 + hashes, &close).map_or(rest.len(), |e| e + close.len())
        } else if rest[0] == '"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != '"' {
                j += if rest[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == '\'' {
            // A character literal ('a', '\n', '\u{1b}'), not a lifetime ('a).
            let close = if rest.get(1) == Some(&'\\') {
                rest.iter().skip(2).position(|c| *c == '\'').map(|p| p + 3)
            } else if rest.get(2) == Some(&'\'') {
                Some(3)
            } else {
                None
            };
            match close {
                Some(n) => n,
                None => {
                    out.push('\'');
                    i += 1;
                    continue;
                }
            }
        } else {
            out.push(chars[i]);
            i += 1;
            continue;
        };
        blank(&mut out, &rest[..end]);
        i += end;
    }
    out
}

/// Where `needle` is in `hay`, from `from`.
fn find(hay: &[char], from: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    (from..hay.len()).find(|i| hay[*i..].starts_with(&needle))
}

/// `code` with every `#[cfg(test)]` item blanked, and the names of the modules it declares
/// as `#[cfg(test)] mod name;` (their files are test code).
fn without_tests(code: &str) -> (String, Vec<String>) {
    const ATTR: &str = "#[cfg(test)]";
    let mut code = code.to_owned();
    let mut mods = Vec::new();
    while let Some(at) = code.find(ATTR) {
        let mut i = at + ATTR.len();
        // Further attributes of the same item.
        loop {
            let rest = &code[i..];
            let skipped = rest.len() - rest.trim_start().len();
            if rest.trim_start().starts_with("#[") {
                i += skipped + rest.trim_start().find(']').map_or(rest.len(), |e| e + 1);
            } else {
                break;
            }
        }
        let item = &code[i..];
        let semi = item.find(';');
        let brace = item.find('{');
        let end = match (semi, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => {
                let words: Vec<&str> = item[..s].split_whitespace().collect();
                if let Some(m) = words.iter().position(|w| *w == "mod") {
                    mods.extend(words.get(m + 1).map(|n| (*n).to_owned()));
                }
                i + s + 1
            }
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = code.len();
                for (j, c) in code[i + b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + b + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            _ => code.len(),
        };
        let blank: String =
            code[at..end].chars().map(|c| if c == '\n' { c } else { ' ' }).collect();
        code.replace_range(at..end, &blank);
    }
    (code, mods)
}

/// The strongly connected components of more than one module (Tarjan), each sorted.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
}

/// The circles, each with the edges inside it and where each is written.
fn describe(graph: &Graph, circles: &[Vec<String>]) -> String {
    let mut said = String::new();
    for circle in circles {
        said.push_str(&format!("import circle among {}:\n", circle.join(", ")));
        for from in circle {
            for (to, at) in &graph[from] {
                if circle.contains(to) {
                    let first = &at[0];
                    said.push_str(&format!(
                        "  {from} -> {to}: {}:{} {} (references: {})\n",
                        first.file,
                        first.line,
                        first.path,
                        at.len()
                    ));
                }
            }
        }
    }
    said
}
