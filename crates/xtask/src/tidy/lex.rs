//! Rust source as tokens, enough for tidy's checks: identifiers, punctuation (the few
//! two-character operators the checks look for kept whole), literals and lifetimes, each
//! with the lines it spans. Comments are dropped; `#[cfg(test)]` items can be left out.

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An identifier or keyword (`match`, `FaultKind`, `r#type` as `type`).
    Ident,
    /// Punctuation: one character, or one of `=>`, `::`, `&&`, `||`, `->`, `..`.
    Punct,
    /// A string, character or number literal.
    Literal,
    /// `'a`.
    Lifetime,
}

/// One token: its kind, its text, and the 1-based lines it starts and ends on.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub kind: Kind,
    pub text: String,
    pub line: usize,
    pub end_line: usize,
}

impl Token {
    /// Whether it is the identifier or punctuation `text`.
    pub fn is(&self, text: &str) -> bool {
        self.kind != Kind::Literal && self.text == text
    }
}

const PAIRS: [&str; 6] = ["=>", "::", "&&", "||", "->", ".."];

/// The tokens of `source`.
pub(crate) fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        at: 0,
        line: 1,
        out: Vec::new(),
    };
    lexer.run();
    lexer.out
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
    line: usize,
    out: Vec<Token>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> char {
        self.chars.get(self.at + ahead).copied().unwrap_or('\0')
    }

    /// Moves past one character, counting lines.
    fn bump(&mut self) {
        if self.peek(0) == '\n' {
            self.line += 1;
        }
        self.at += 1;
    }

    fn push(&mut self, kind: Kind, start: usize, line: usize) {
        let text: String = self.chars[start..self.at].iter().collect();
        self.out.push(Token {
            kind,
            text,
            line,
            end_line: self.line,
        });
    }

    fn run(&mut self) {
        while self.at < self.chars.len() {
            let (c, start, line) = (self.peek(0), self.at, self.line);
            match c {
                _ if c.is_whitespace() => self.bump(),
                '/' if self.peek(1) == '/' => {
                    while self.at < self.chars.len() && self.peek(0) != '\n' {
                        self.bump();
                    }
                }
                '/' if self.peek(1) == '*' => self.block_comment(),
                '"' => {
                    self.quoted('"');
                    self.push(Kind::Literal, start, line);
                }
                'r' | 'b' | 'c' if self.string_prefix().is_some() => {
                    self.prefixed_string();
                    self.push(Kind::Literal, start, line);
                }
                '\'' => self.quote_or_lifetime(start, line),
                _ if c.is_alphabetic() || c == '_' => {
                    while self.peek(0).is_alphanumeric() || self.peek(0) == '_' {
                        self.bump();
                    }
                    let mut token_start = start;
                    if self.chars[start..self.at] == ['r'] && self.peek(0) == '#' {
                        // A raw identifier, `r#type`: the name is what follows `#`.
                        self.bump();
                        token_start = self.at;
                        while self.peek(0).is_alphanumeric() || self.peek(0) == '_' {
                            self.bump();
                        }
                    }
                    self.push(Kind::Ident, token_start, line);
                }
                _ if c.is_ascii_digit() => {
                    while self.peek(0).is_alphanumeric()
                        || self.peek(0) == '_'
                        || (self.peek(0) == '.' && self.peek(1).is_ascii_digit())
                    {
                        self.bump();
                    }
                    self.push(Kind::Literal, start, line);
                }
                _ => {
                    let pair: String = [c, self.peek(1)].iter().collect();
                    self.bump();
                    if PAIRS.contains(&pair.as_str()) {
                        self.bump();
                    }
                    self.push(Kind::Punct, start, line);
                }
            }
        }
    }

    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while self.at < self.chars.len() {
            if self.peek(0) == '/' && self.peek(1) == '*' {
                depth += 1;
                self.bump();
            } else if self.peek(0) == '*' && self.peek(1) == '/' {
                depth -= 1;
                self.bump();
                if depth == 0 {
                    self.bump();
                    return;
                }
            }
            self.bump();
        }
    }

    /// From an opening `quote` to its closing one, escapes included.
    fn quoted(&mut self, quote: char) {
        self.bump();
        while self.at < self.chars.len() && self.peek(0) != quote {
            if self.peek(0) == '\\' {
                self.bump();
            }
            self.bump();
        }
        self.bump();
    }

    /// For `r"`, `r#"`, `b"`, `br"`, `c"`, `b'`: how many characters the prefix has.
    fn string_prefix(&self) -> Option<usize> {
        let mut n = 0;
        while n < 2 && matches!(self.peek(n), 'r' | 'b' | 'c') {
            n += 1;
        }
        let raw = self.chars[self.at..self.at + n].contains(&'r');
        match self.peek(n) {
            '"' | '\'' if !raw || self.peek(n) == '"' => Some(n),
            '#' if raw => {
                let mut hashes = n;
                while self.peek(hashes) == '#' {
                    hashes += 1;
                }
                (self.peek(hashes) == '"').then_some(n)
            }
            _ => None,
        }
    }

    fn prefixed_string(&mut self) {
        let n = self.string_prefix().expect("checked by the caller");
        let raw = self.chars[self.at..self.at + n].contains(&'r');
        for _ in 0..n {
            self.bump();
        }
        if !raw {
            let quote = self.peek(0);
            self.quoted(quote);
            return;
        }
        let mut hashes = 0;
        while self.peek(0) == '#' {
            hashes += 1;
            self.bump();
        }
        self.bump(); // the opening quote
        while self.at < self.chars.len() {
            if self.peek(0) == '"' && (1..=hashes).all(|k| self.peek(k) == '#') {
                for _ in 0..=hashes {
                    self.bump();
                }
                return;
            }
            self.bump();
        }
    }

    /// `'a'`, `'\n'` (a character) or `'a` (a lifetime or label).
    fn quote_or_lifetime(&mut self, start: usize, line: usize) {
        if self.peek(1) == '\\' || self.peek(2) == '\'' {
            self.quoted('\'');
            self.push(Kind::Literal, start, line);
            return;
        }
        self.bump();
        while self.peek(0).is_alphanumeric() || self.peek(0) == '_' {
            self.bump();
        }
        self.push(Kind::Lifetime, start, line);
    }
}

/// The index of the token closing the bracket opened at `open` (`(`, `[` or `{`), or the last
/// index when it is never closed.
pub(crate) fn closing(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        if token.kind != Kind::Punct {
            continue;
        }
        match token.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    tokens.len().saturating_sub(1)
}

/// Whether the tokens from `at` spell `#[cfg(test)]`.
fn is_cfg_test(tokens: &[Token], at: usize) -> bool {
    let words = ["#", "[", "cfg", "(", "test", ")", "]"];
    tokens.len() >= at + words.len() && words.iter().zip(&tokens[at..]).all(|(w, t)| t.is(w))
}

/// The index of the last token of the item starting at `at` (after its attributes): its
/// closing brace, or its `;`.
fn item_end(tokens: &[Token], mut at: usize) -> usize {
    while at < tokens.len() && tokens[at].is("#") {
        at = closing(tokens, at + 1) + 1;
    }
    let mut depth = 0usize;
    while at < tokens.len() {
        let token = &tokens[at];
        match token.text.as_str() {
            "(" | "[" if token.kind == Kind::Punct => depth += 1,
            ")" | "]" if token.kind == Kind::Punct => depth = depth.saturating_sub(1),
            "{" if token.kind == Kind::Punct && depth == 0 => return closing(tokens, at),
            ";" if token.kind == Kind::Punct && depth == 0 => return at,
            _ => {}
        }
        at += 1;
    }
    tokens.len().saturating_sub(1)
}

/// The tokens without the `#[cfg(test)]` items, and the lines those items span (from the
/// attribute's line to the item's last line).
pub(crate) fn without_tests(tokens: Vec<Token>) -> (Vec<Token>, usize) {
    let mut kept = Vec::with_capacity(tokens.len());
    let mut test_lines = 0;
    let mut at = 0;
    while at < tokens.len() {
        if is_cfg_test(&tokens, at) {
            let end = item_end(&tokens, at + 7);
            test_lines += tokens[end].end_line + 1 - tokens[at].line;
            at = end + 1;
            continue;
        }
        kept.push(tokens[at].clone());
        at += 1;
    }
    (kept, test_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<String> {
        tokens(source).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn comments_strings_and_lifetimes() {
        assert_eq!(
            texts("a /* x { */ b // c {\n 'x' '\\n' 'a \"}\" r#\"}\"# => ::"),
            ["a", "b", "'x'", "'\\n'", "'a", "\"}\"", "r#\"}\"#", "=>", "::"]
        );
        let lines: Vec<usize> = tokens("a\n\"x\ny\"\nb")
            .iter()
            .map(|t| t.end_line)
            .collect();
        assert_eq!(lines, [1, 3, 4]);
        assert_eq!(texts("r#type b'x' br\"y\""), ["type", "b'x'", "br\"y\""]);
    }

    #[test]
    fn test_items_are_left_out_and_their_lines_counted() {
        let source =
            "fn a() {}\n#[cfg(test)]\n#[allow(x)]\nmod tests {\n    fn b() {}\n}\nfn c() {}\n";
        let (kept, lines) = without_tests(tokens(source));
        let names: Vec<&str> = kept.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            names,
            ["fn", "a", "(", ")", "{", "}", "fn", "c", "(", ")", "{", "}"]
        );
        assert_eq!(lines, 5);
        let (kept, _) = without_tests(tokens("#[cfg(test)]\nuse x::y;\nfn c() {}"));
        assert_eq!(kept[0].text, "fn");
    }
}
