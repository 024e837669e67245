//! The page renderer (`plugins/preview`, `wit/preview@0.1.0`) as the host runs it: real PDF
//! files and images drawn in its sandbox, at the width asked, with a PDF page's text layer; hostile files (deep nesting, a huge
//! page, a font that inflates without end) stopped within the call's bounds, each alone.

mod common;

use std::time::{Duration, Instant};

use quarry_runtime::{Limits, Renderer, RuntimeErrorKind, Unrendered, renderer_limits};
use quarry_tests::pdf::{compressed_stream, of_objects, pdf};

fn renderer(limits: Limits) -> Renderer {
    common::runtime()
        .load_renderer(&quarry_tests::renderer_component(), limits)
        .expect("the renderer loads")
}

/// The share of the image's pixels that are dark (drawn text), and its size.
fn ink(png: &[u8]) -> (f64, u32, u32) {
    let image = image::load_from_memory(png).expect("a PNG").to_luma8();
    let dark = image.pixels().filter(|p| p.0[0] < 128).count();
    (
        dark as f64 / f64::from(image.width() * image.height()),
        image.width(),
        image.height(),
    )
}

fn report() -> Vec<u8> {
    pdf(
        "Report",
        &[
            &["Annual report"],
            &[
                "The lighthouse keeper retired in spring.",
                "Costs fell sharply.",
            ],
            &["Outlook"],
        ],
        true,
    )
}

#[test]
fn a_pdf_pages_text_layer_gives_each_word_and_character_where_it_is_drawn() {
    let renderer = renderer(renderer_limits());
    let image = renderer
        .render(&report(), "application/pdf", 2, 612, true)
        .expect("no sandbox failure")
        .expect("drawn");
    let texts: Vec<&str> = image.words.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "The",
            "lighthouse",
            "keeper",
            "retired",
            "in",
            "spring.",
            "Costs",
            "fell",
            "sharply."
        ]
    );
    let gray = image.gray.as_ref().expect("gray pixels, as asked");
    assert_eq!((gray.width, gray.height), (612, 792));
    assert_eq!(gray.pixels.len(), 612 * 792);
    // Line 1 is set at 72 points from the left, its baseline 72 from the top, 12 points high.
    let first = image.words[0].boxes[0];
    assert!((71..=73).contains(&first.x), "{first:?}");
    assert!(
        (58..=64).contains(&first.y) && (12..=16).contains(&first.h),
        "{first:?}"
    );
    let lighthouse = &image.words[1];
    assert_eq!(lighthouse.boxes.len(), "lighthouse".len());
    for pair in lighthouse.boxes.windows(2) {
        assert!(
            pair[1].x >= pair[0].x + pair[0].w - 1,
            "characters in order: {pair:?}"
        );
    }
    // Each box holds its character's ink, read from the gray pixels.
    for b in &lighthouse.boxes {
        let dark = (b.y..b.y + b.h)
            .flat_map(|y| (b.x..b.x + b.w).map(move |x| (x, y)))
            .filter(|&(x, y)| gray.pixels[(y * gray.width + x) as usize] < 128)
            .count();
        assert!(dark > 0, "ink under {b:?}");
    }
    // The second line is 14 points lower.
    let costs = image.words[6].boxes[0];
    assert!(
        (13..=15).contains(&(costs.y - first.y)),
        "{costs:?} {first:?}"
    );
    // Drawn 306 pixels wide, the boxes halve.
    let half = renderer
        .render(&report(), "application/pdf", 2, 306, false)
        .expect("no sandbox failure")
        .expect("drawn");
    assert!(half.gray.is_none(), "no pixels unless asked");
    let small = half.words[0].boxes[0];
    assert!(small.x.abs_diff(first.x / 2) <= 1 && small.y.abs_diff(first.y / 2) <= 1);
}

#[test]
fn a_pdf_page_is_drawn_at_the_width_asked_with_its_text_and_page_count() {
    let renderer = renderer(renderer_limits());
    let image = renderer
        .render(&report(), "application/pdf", 2, 612, false)
        .expect("no sandbox failure")
        .expect("drawn");
    assert_eq!((image.width, image.height, image.page_count), (612, 792, 3));
    let (dark, w, h) = ink(&image.png);
    assert_eq!((w, h), (612, 792), "the PNG is the size announced");
    assert!(
        dark > 0.001 && dark < 0.05,
        "text is drawn on white: {dark}"
    );
    let small = renderer
        .render(&report(), "application/pdf", 1, 200, false)
        .expect("no sandbox failure")
        .expect("drawn");
    assert_eq!((small.width, small.height), (200, 258));
}

#[test]
fn a_page_of_text_is_laid_out_with_its_text_layer() {
    let renderer = renderer(renderer_limits());
    let text = format!(
        "Minutes of the harbour board\n\n{}\nCafé: 4 €\n索引",
        "The mooring fees rise in March. ".repeat(6)
    );
    let image = renderer
        .render(text.as_bytes(), "text/plain", 1, 612, false)
        .expect("no sandbox failure")
        .expect("drawn");
    assert_eq!((image.width, image.height, image.page_count), (612, 792, 1));
    let (dark, _, _) = ink(&image.png);
    assert!(dark > 0.001 && dark < 0.05, "text is drawn: {dark}");
    let words: Vec<&str> = image.words.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(&words[..5], ["Minutes", "of", "the", "harbour", "board"]);
    // The long line wraps: "mooring" is found on two lines, below the title.
    let moorings: Vec<_> = image
        .words
        .iter()
        .filter(|w| w.text == "mooring")
        .map(|w| w.boxes[0])
        .collect();
    assert_eq!(moorings.len(), 6, "{words:?}");
    assert!(
        moorings.iter().any(|b| b.y > moorings[0].y),
        "wrapped: {moorings:?}"
    );
    assert!(moorings[0].y > image.words[0].boxes[0].y);
    assert!(
        words.contains(&"Café:") && words.contains(&"€"),
        "{words:?}"
    );
    assert!(words.contains(&"??"), "outside the font's set: {words:?}");
}

#[test]
fn what_cannot_be_drawn_says_why() {
    let renderer = renderer(renderer_limits());
    let draw = |bytes: &[u8], mime: &str, page: u32, width: u32| {
        renderer
            .render(bytes, mime, page, width, false)
            .expect("no sandbox failure")
            .expect_err("not drawn")
    };
    assert_eq!(
        draw(&report(), "application/pdf", 4, 400),
        Unrendered::NoSuchPage(3)
    );
    assert_eq!(
        draw(&report(), "application/pdf", 0, 400),
        Unrendered::NoSuchPage(3)
    );
    assert!(matches!(
        draw(&report(), "application/pdf", 1, 0),
        Unrendered::TooLarge(_)
    ));
    assert!(matches!(
        draw(&report(), "application/pdf", 1, 5000),
        Unrendered::TooLarge(_)
    ));
    assert!(matches!(
        draw(b"not a pdf", "application/pdf", 1, 400),
        Unrendered::Malformed(_)
    ));
    assert!(matches!(
        draw(b"<p>hello</p>", "text/html", 1, 400),
        Unrendered::Unsupported(_)
    ));
    assert!(matches!(
        draw(b"caf\xe9", "text/plain", 1, 400),
        Unrendered::Malformed(_)
    ));
    assert_eq!(
        draw(b"hello", "text/plain", 2, 400),
        Unrendered::NoSuchPage(1)
    );
    assert!(matches!(
        draw(b"\x89PNG junk", "image/png", 1, 400),
        Unrendered::Malformed(_)
    ));
}

#[test]
fn an_image_is_scaled_down_never_up() {
    let renderer = renderer(renderer_limits());
    let mut picture = image::GrayImage::from_pixel(800, 600, image::Luma([255]));
    for x in 100..700 {
        for y in 280..320 {
            picture.put_pixel(x, y, image::Luma([0]));
        }
    }
    let mut png = Vec::new();
    picture
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("encode");
    let drawn = |width| {
        renderer
            .render(&png, "image/png", 1, width, false)
            .expect("no sandbox failure")
            .expect("drawn")
    };
    let half = drawn(400);
    assert_eq!((half.width, half.height, half.page_count), (400, 300, 1));
    let (dark, _, _) = ink(&half.png);
    assert!((0.03..0.06).contains(&dark), "the bar is kept: {dark}");
    let whole = drawn(2000);
    assert_eq!(
        (whole.width, whole.height),
        (800, 600),
        "never wider than it is"
    );
}

#[test]
fn a_page_of_more_characters_than_the_bound_keeps_fifty_thousand_in_its_text_layer() {
    // 300 lines of 240 characters (192 of them not spaces) in a half-point font: 57,600.
    let line = "abcd ".repeat(48);
    let mut ops = String::from("BT /F1 0.5 Tf 0.6 TL 4 790 Td\n");
    for _ in 0..300 {
        ops.push_str(&format!("({line}) Tj T*\n"));
    }
    ops.push_str("ET");
    let dense = of_objects(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
           /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
            .to_vec(),
        compressed_stream(ops.as_bytes(), ""),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ]);
    let image = renderer(renderer_limits())
        .render(&dense, "application/pdf", 1, 612, false)
        .expect("no sandbox failure")
        .expect("drawn");
    let chars: usize = image.words.iter().map(|w| w.boxes.len()).sum();
    assert_eq!(
        chars, 50_000,
        "the first fifty thousand, in the order drawn"
    );
    assert!(
        image
            .words
            .iter()
            .all(|w| w.text == "abcd" || "abcd".starts_with(&w.text))
    );
}

/// A page whose resources hold arrays nested `depth` deep.
fn deeply_nested(depth: usize) -> Vec<u8> {
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    page_with(
        &format!("/MediaBox [0 0 612 792] /Resources << /X {nested} >>"),
        &[],
    )
}

/// A one-page PDF whose page dictionary has `entries`, and `extra` objects from 5 on.
fn page_with(entries: &str, extra: &[Vec<u8>]) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R {entries} /Contents 4 0 R >>").into_bytes(),
        compressed_stream(b"BT /F1 24 Tf 72 700 Td (Hostile) Tj ET", ""),
    ];
    objects.extend_from_slice(extra);
    of_objects(&objects)
}

#[test]
fn a_hostile_pdf_fails_its_preview_alone_within_the_calls_bounds() {
    let limits = Limits {
        memory_bytes: 128 << 20,
        call_timeout: Duration::from_secs(5),
        ..Limits::default()
    };
    let renderer = renderer(limits.clone());
    let bound = limits.call_timeout + Duration::from_secs(2);
    // A page as large as a field: drawn, scaled to the width asked.
    let huge = page_with("/MediaBox [0 0 1000000000 1000000000]", &[]);
    let started = Instant::now();
    let drawn = renderer
        .render(&huge, "application/pdf", 1, 400, false)
        .expect("no sandbox failure")
        .expect("drawn");
    assert_eq!((drawn.width, drawn.height), (400, 400));
    // A tall page is drawn narrower, never more than four times as tall as wide; a sliver that
    // would be under a pixel across is refused.
    let tall = page_with("/MediaBox [0 0 100 1000]", &[]);
    let drawn = renderer
        .render(&tall, "application/pdf", 1, 400, false)
        .expect("no sandbox failure")
        .expect("drawn");
    assert_eq!((drawn.width, drawn.height), (160, 1600));
    let sliver = page_with("/MediaBox [0 0 10 100000]", &[]);
    let refused = renderer
        .render(&sliver, "application/pdf", 1, 400, false)
        .expect("no sandbox failure");
    assert!(
        matches!(refused, Err(Unrendered::TooLarge(_))),
        "{refused:?}"
    );

    // A font whose program inflates to 1 GiB, and arrays nested 200,000 deep.
    let bomb = vec![0u8; 1 << 30];
    let font = page_with(
        "/MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>",
        &[
            b"<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 /LastChar 126 \
               /FontDescriptor 6 0 R >>"
                .to_vec(),
            b"<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] \
               /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 \
               /FontFile2 7 0 R >>"
                .to_vec(),
            compressed_stream(&bomb, ""),
        ],
    );
    drop(bomb);
    for (name, hostile) in [
        ("font bomb", font),
        ("deep nesting", deeply_nested(200_000)),
    ] {
        let started = Instant::now();
        let outcome = renderer.render(&hostile, "application/pdf", 1, 400, false);
        let took = started.elapsed();
        assert!(
            took < bound,
            "{name}: stopped within the call's bounds, took {took:?}"
        );
        match outcome {
            Err(e) => assert!(
                matches!(
                    e.kind,
                    RuntimeErrorKind::MemoryLimit { .. }
                        | RuntimeErrorKind::Timeout { .. }
                        | RuntimeErrorKind::Trap { .. }
                ),
                "{name}: {e}"
            ),
            Ok(Err(why)) => eprintln!("{name}: not drawn: {why}"),
            Ok(Ok(image)) => assert!(image.width <= 400, "{name}: drawn within bounds"),
        }
        // The next preview is drawn as if nothing happened.
        let next = renderer
            .render(&report(), "application/pdf", 2, 300, false)
            .expect("no sandbox failure")
            .expect("drawn");
        assert_eq!(next.width, 300, "{name}: the renderer still draws");
    }
    assert!(started.elapsed() < bound * 4);
}
