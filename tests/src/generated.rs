//! Generated text for benchmarks: a vocabulary of made-up words and Zipf-distributed text, the
//! same on every run.

use crate::rng::Rng;

/// `n` distinct made-up words.
pub fn vocabulary(n: usize) -> Vec<String> {
    let syllables = [
        "ka", "lo", "mi", "ra", "ten", "vo", "su", "pe", "dor", "ix", "an", "qu", "zel", "bo",
        "fi", "nu",
    ];
    (0..n)
        .map(|i| {
            let mut word = String::new();
            let mut x = i + 17;
            for _ in 0..3 {
                word.push_str(syllables[x % syllables.len()]);
                x /= syllables.len();
            }
            word.push_str(&(i % 7).to_string());
            word
        })
        .collect()
}

/// `n` words of `words`, frequent ones more often, separated by spaces.
pub fn text(rng: &mut Rng, words: &[String], n: usize) -> String {
    (0..n)
        .map(|_| words[rng.zipf(words.len())].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Common English words that are one token each for BERT-style tokenizers, so `n` of them make
/// a passage of about `n` tokens.
pub const ENGLISH: [&str; 64] = [
    "the", "people", "water", "time", "report", "city", "market", "school", "river", "house",
    "system", "music", "energy", "paper", "family", "money", "plant", "light", "story", "game",
    "power", "field", "road", "food", "health", "company", "island", "car", "team", "science",
    "history", "language", "church", "war", "land", "film", "book", "art", "air", "sea", "price",
    "group", "child", "night", "study", "garden", "dog", "bank", "train", "village", "museum",
    "doctor", "engine", "ship", "law", "army", "forest", "rain", "summer", "winter", "season",
    "player", "office", "station",
];

/// `n` words of [`ENGLISH`], uniformly drawn, separated by spaces.
pub fn english(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| *rng.pick(&ENGLISH))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Files per sub-folder of a [`write_notes`] folder.
const NOTES_PER_FOLDER: usize = 100;

/// Where note `i` of a [`write_notes`] folder lives: `f<i/100>/note<i>.md`.
pub fn note_path(dir: &std::path::Path, i: usize) -> std::path::PathBuf {
    dir.join(format!("f{:04}/note{i:06}.md", i / NOTES_PER_FOLDER))
}

/// Fills `dir` with `files` Markdown notes of about 80 English words each, 100 to a
/// sub-folder, the same for the same `rng`.
pub fn write_notes(dir: &std::path::Path, files: usize, rng: &mut Rng) {
    for i in 0..files {
        let path = note_path(dir, i);
        if i % NOTES_PER_FOLDER == 0 {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        }
        let text = format!("# Note {i}\n\n{}\n", english(rng, 80));
        std::fs::write(path, text).expect("write");
    }
}
