//! The functions of a token stream, each with the type its `impl` (or trait) block is for:
//! what the length ratchet measures and what a planted site is named by
//! (`HighestTokens::admit`, or `expire_due` for a free function).

use super::lex::{closing, Kind, Token};

/// One function with a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Function {
    /// `Type::name`, or `name` outside an `impl` or trait block.
    pub path: String,
    /// The line of `fn`.
    pub line: usize,
    /// The token indices of its body's braces.
    pub open: usize,
    pub close: usize,
    /// Lines with code strictly inside the braces (clippy's `too_many_lines` count: no blank
    /// lines, no comment-only lines, not the braces' own lines unless code shares them).
    pub code_lines: usize,
}

/// An `impl` or `trait` block: the name it is for and its braces.
struct Block {
    name: String,
    open: usize,
    close: usize,
}

/// Whether `impl` at `at` starts an item (not `-> impl Trait` or `x: impl Trait`).
fn starts_item(tokens: &[Token], at: usize) -> bool {
    at == 0
        || ["}", ";", "{", "]", "unsafe"]
            .iter()
            .any(|t| tokens[at - 1].is(t))
}

/// The last identifier of the type from `from` (outside angle brackets), up to `where` or
/// the block's brace: `fmt::Display for Lease` is read from after `for`.
fn type_name(tokens: &[Token], from: usize, open: usize) -> String {
    let mut angle = 0i32;
    let mut name = String::new();
    for token in &tokens[from..open] {
        match token.text.as_str() {
            "<" => angle += 1,
            ">" => angle -= 1,
            "->" => {}
            "where" if angle == 0 => break,
            _ if angle == 0 && token.kind == Kind::Ident && token.text != "dyn" => {
                name.clone_from(&token.text);
            }
            _ => {}
        }
    }
    name
}

fn blocks(tokens: &[Token]) -> Vec<Block> {
    let mut out = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        let is_impl = token.is("impl") && starts_item(tokens, at);
        let is_trait =
            token.is("trait") && tokens.get(at + 1).is_some_and(|t| t.kind == Kind::Ident);
        if !(is_impl || is_trait) {
            continue;
        }
        let Some(open) = (at..tokens.len()).find(|&i| tokens[i].is("{") || tokens[i].is(";"))
        else {
            continue;
        };
        if tokens[open].is(";") {
            continue;
        }
        let mut from = at + 1;
        if is_impl && tokens[from].is("<") {
            let mut angle = 0i32;
            while from < open {
                angle += i32::from(tokens[from].is("<")) - i32::from(tokens[from].is(">"));
                from += 1;
                if angle == 0 {
                    break;
                }
            }
        }
        let mut angle = 0i32;
        for (i, t) in tokens.iter().enumerate().take(open).skip(from) {
            angle += i32::from(t.is("<")) - i32::from(t.is(">"));
            if angle == 0 && t.is("for") {
                from = i + 1;
            }
        }
        out.push(Block {
            name: type_name(tokens, from, open),
            open,
            close: closing(tokens, open),
        });
    }
    out
}

/// Lines with a token strictly between the tokens `open` and `close`.
fn code_lines(tokens: &[Token], open: usize, close: usize) -> usize {
    let mut lines: Vec<usize> = tokens[open + 1..close]
        .iter()
        .flat_map(|t| t.line..=t.end_line)
        .collect();
    lines.dedup();
    lines.sort_unstable();
    lines.dedup();
    lines.len()
}

/// Every function with a body, in source order.
pub(crate) fn functions(tokens: &[Token]) -> Vec<Function> {
    let blocks = blocks(tokens);
    let mut out = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        if !token.is("fn") || tokens.get(at + 1).is_none_or(|t| t.kind != Kind::Ident) {
            continue;
        }
        let mut depth = 0i32;
        let mut body = None;
        for (i, t) in tokens.iter().enumerate().skip(at + 2) {
            match t.text.as_str() {
                "(" | "[" if t.kind == Kind::Punct => depth += 1,
                ")" | "]" if t.kind == Kind::Punct => depth -= 1,
                "{" if t.kind == Kind::Punct && depth == 0 => {
                    body = Some(i);
                    break;
                }
                ";" if t.kind == Kind::Punct && depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let close = closing(tokens, open);
        let owner = blocks
            .iter()
            .filter(|b| b.open < at && at < b.close)
            .min_by_key(|b| b.close - b.open);
        let name = &tokens[at + 1].text;
        out.push(Function {
            path: owner.map_or(name.clone(), |b| format!("{}::{name}", b.name)),
            line: token.line,
            open,
            close,
            code_lines: code_lines(tokens, open, close),
        });
    }
    out
}

/// The innermost function whose body holds token `at`.
pub(crate) fn enclosing(functions: &[Function], at: usize) -> Option<&Function> {
    functions
        .iter()
        .filter(|f| f.open < at && at < f.close)
        .min_by_key(|f| f.close - f.open)
}

#[cfg(test)]
mod tests {
    use super::super::lex::tokens;
    use super::*;

    fn paths(source: &str) -> Vec<(String, usize)> {
        functions(&tokens(source))
            .into_iter()
            .map(|f| (f.path, f.code_lines))
            .collect()
    }

    #[test]
    fn functions_are_named_by_their_impl_and_counted_as_clippy_counts() {
        let source = "
impl<'a> Walk<'a> {
    fn new() -> impl Fn() -> u64 {
        // a comment

        let x = 1;
        x
    }
}
impl fmt::Display for Lease {
    fn fmt(&self) { a(); }
}
trait T { fn decl(&self); fn given(&self) { b() } }
fn free(f: fn(u64) -> u64) -> [u8; 2] {
    \"a
    b\"
}
";
        assert_eq!(
            paths(source),
            [
                ("Walk::new".to_string(), 2),
                ("Lease::fmt".to_string(), 1),
                ("T::given".to_string(), 1),
                ("free".to_string(), 2),
            ]
        );
    }
}
