//! Which links a reader may be sent to: one rule for the base URL a build accepts, the page
//! URLs a bundle may carry, and the URLs the widget navigates to.

/// Whether `url` is a link a reader can follow safely: a path (`/docs/`, `guide/x.html`,
/// `#top`), a scheme-relative `//host/...`, or an `http(s)://` URL. Anything with another
/// scheme (`javascript:`, `data:`, ...) is not, and neither is a value with leading
/// whitespace or control characters, which browsers strip before they read the scheme.
pub fn is_safe_link(url: &str) -> bool {
    if url.starts_with(|c: char| c.is_whitespace()) || url.chars().any(char::is_control) {
        return false;
    }
    match scheme(url) {
        None => true,
        Some(s) => s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"),
    }
}

/// What comes before the first `:` of `url` when no `/`, `?` or `#` comes first: its scheme as
/// a browser reads it. Not only RFC 3986 schemes count: anything there is not a path.
fn scheme(url: &str) -> Option<&str> {
    let end = url.find([':', '/', '?', '#'])?;
    url[end..].starts_with(':').then(|| &url[..end])
}

#[cfg(test)]
mod tests {
    use super::is_safe_link;

    #[test]
    fn paths_and_http_links_are_safe_and_script_is_not() {
        for ok in [
            "/",
            "/docs/",
            "guide/install.html",
            "../x.html#a:b",
            "#top",
            "//docs.example.com/x/",
            "https://docs.example.com/x/",
            "HTTP://docs.example.com/",
            "",
            "/a?b=c:d",
        ] {
            assert!(is_safe_link(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)//",
            "JavaScript:alert(1)",
            " javascript:alert(1)",
            "\tjavascript:alert(1)",
            "java\nscript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:x",
            "file:///etc/passwd",
            "a b:c",
            ":x",
        ] {
            assert!(!is_safe_link(bad), "{bad:?}");
        }
    }
}
