//! Recent searches, kept in the reader's own browser (localStorage), never sent anywhere.

const KEY: &str = "lantern:recent";
const MAX: usize = 8;

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

pub fn load() -> Vec<String> {
    storage()
        .and_then(|s| s.get_item(KEY).ok()?)
        .map(|v| {
            v.split('\n')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub fn remember(query: &str) {
    let q = query.trim();
    if q.is_empty() {
        return;
    }
    let mut list = load();
    list.retain(|x| x != q);
    list.insert(0, q.replace('\n', " "));
    list.truncate(MAX);
    if let Some(s) = storage() {
        let _ = s.set_item(KEY, &list.join("\n"));
    }
}
