//! How OpenAI frames a request around the harmony tool rendering.
//!
//! - `openai-responses` (harmony, gpt-5.x on the Responses API): every message is
//!   `<|start|>ROLE<|message|>CONTENT<|end|>` (content + 4 tokens; the role is one token) and a
//!   request ends with `<|start|>assistant` (2). The system prompt is the developer message's
//!   text; with tools it is followed by `\n\n# Tools\n\n## functions\n\n` and the namespace.
//! - `openai-chat` (Chat Completions): 3 tokens a message plus the role, 3 to prime the reply
//!   (OpenAI Cookbook, "How to count tokens with tiktoken"); with tools, the namespace plus 9,
//!   minus 4 when a system message is there to hold it, and the first system message gains a
//!   trailing newline (hmarr/openai-chat-tokens, MIT, measured against the API). This reproduces
//!   the Cookbook's tool example exactly (gpt-4o 101, gpt-4 105).
//!
//! Special tokens are counted as one token each, as the API bills them; the texts between them
//! are counted with o200k_base (or the counter's tokenizer).

use super::harmony::{self, ToolCounting};
use crate::tokenize::Tokenizer;

/// Tokens around one message's content (start, role, separator, end).
pub const MESSAGE_FRAMING: usize = 4;
/// `<|start|>assistant` closing a Responses request.
pub const RESPONSES_PRIMING: usize = 2;
/// `<|im_start|>assistant<|im_sep|>` closing a Chat Completions request.
pub const CHAT_PRIMING: usize = 3;
/// Chat Completions: the functions block costs its text plus 9, minus 4 when it joins an
/// existing system message (hmarr/openai-chat-tokens).
pub const CHAT_TOOLS_EXTRA: usize = 9;
pub const CHAT_TOOLS_SHARED_SYSTEM: usize = 4;

/// The two OpenAI request shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Responses,
    Chat,
}

/// Counts one OpenAI request shape.
#[derive(Debug, Clone, Copy)]
pub struct Framing {
    pub api: Api,
    pub tokenizer: Tokenizer,
}

impl Framing {
    fn n(self, s: &str) -> usize {
        self.tokenizer.count(s)
    }

    fn priming(self) -> usize {
        match self.api {
            Api::Responses => RESPONSES_PRIMING,
            Api::Chat => CHAT_PRIMING,
        }
    }

    /// The system (developer) message and the reply priming: what every request carries
    /// before any tool. An absent or empty prompt sends no message.
    pub fn system(self, system: Option<&str>) -> usize {
        self.system_from_count(system.filter(|s| !s.is_empty()).map(|s| self.n(s)))
    }

    /// As [`Framing::system`], from a prompt's content count.
    pub fn system_from_count(self, content: Option<usize>) -> usize {
        content.map_or(0, |c| c + MESSAGE_FRAMING) + self.priming()
    }

    /// A user (or assistant, or tool) message: its content plus framing.
    pub fn message_from_count(self, content: usize) -> usize {
        content + MESSAGE_FRAMING
    }

    /// The fixed cost of sending any functions: everything tools add to the request beyond
    /// the functions' own in-context counts (the section header and namespace, and what the
    /// prompt's last characters merge with).
    pub fn tools_fixed(self, system: Option<&str>) -> usize {
        let counting = ToolCounting {
            tokenizer: self.tokenizer,
        };
        let ns = counting.wrapper();
        let system = system.filter(|s| !s.is_empty());
        match self.api {
            Api::Responses => match system {
                // The developer message exists only because of the tools.
                None => MESSAGE_FRAMING + self.n(harmony::TOOLS_HEADER) + ns,
                Some(s) => {
                    let joined = format!("{s}\n\n{}", harmony::TOOLS_HEADER);
                    self.n(&joined) - self.n(s) + ns
                }
            },
            Api::Chat => match system {
                None => ns + CHAT_TOOLS_EXTRA,
                Some(s) => {
                    let padded = self.n(&format!("{s}\n")) + ns + CHAT_TOOLS_EXTRA;
                    padded - self.n(s) - CHAT_TOOLS_SHARED_SYSTEM
                }
            },
        }
    }

    /// What the `## functions` section adds to the tools sections: its join, its header and
    /// the namespace around its functions.
    fn functions_section(self) -> usize {
        let counting = ToolCounting {
            tokenizer: self.tokenizer,
        };
        let open = harmony::TOOLS_SECTION_OPEN.trim_end();
        self.n(harmony::TOOLS_HEADER) - self.n(open) + counting.wrapper()
    }

    /// [`Framing::tools_fixed`] when no function is sent eagerly: the tools sections opened
    /// (`# Tools`), each deferred surface then adding its own join and section.
    pub fn sections_open(self, system: Option<&str>) -> usize {
        self.tools_fixed(system)
            .saturating_sub(self.functions_section())
    }

    /// A harmony tool call the model writes, framing included (OpenAI harmony `docs/format.md`,
    /// "Function calling"): `<|start|>assistant<|channel|>commentary to=RECIPIENT
    /// <|constrain|>json<|message|>ARGS<|call|>`, each special token one token.
    pub fn call(self, recipient: &str, args: &str) -> usize {
        5 + self.n("assistant")
            + self.n(&format!("commentary to={recipient} "))
            + self.n("json")
            + self.n(args)
    }

    /// A tool's output message: `<|start|>SENDER to=assistant<|channel|>commentary
    /// <|message|>BODY<|end|>`, each special token one token.
    pub fn tool_message(self, sender: &str, body: &str) -> usize {
        4 + self.n(&format!("{sender} to=assistant")) + self.n("commentary") + self.n(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_tools_is_its_messages_and_priming() {
        let f = Framing {
            api: Api::Responses,
            tokenizer: Tokenizer::O200kBase,
        };
        // "You are terse." is 4 o200k tokens: developer message 4 + 4, priming 2.
        assert_eq!(f.system(Some("You are terse.")), 10);
        assert_eq!(f.system(None), 2);
        assert_eq!(f.system(Some("")), 2);
        let c = Framing {
            api: Api::Chat,
            ..f
        };
        assert_eq!(c.system(Some("You are terse.")), 11);
        assert_eq!(c.message_from_count(7), 11);
    }

    #[test]
    fn sections_open_is_the_tools_header_alone() {
        let f = Framing {
            api: Api::Responses,
            tokenizer: Tokenizer::O200kBase,
        };
        let n = |s: &str| Tokenizer::O200kBase.count(s);
        for system in ["You are terse.", "Always confirm destructive actions.\n"] {
            assert_eq!(
                f.sections_open(Some(system)),
                n(&format!("{system}\n\n# Tools")) - n(system),
                "{system:?}"
            );
        }
        // No system prompt: the developer message exists only for the tools.
        assert_eq!(f.sections_open(None), MESSAGE_FRAMING + n("# Tools"));
    }
}
