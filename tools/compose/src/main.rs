//! `compose`: writes every `assets/music/*.txt` as an `.xm` beside it and prints each song's stats;
//! `compose --preview` also renders each to `target/music/NAME.wav` (two passes of a looping song).
//! `compose --check` writes nothing and fails if an `.xm` differs from what its text makes.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preview = args.iter().any(|a| a == "--preview");
    let check = args.iter().any(|a| a == "--check");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let music = root.join("assets/music");
    let mut names: Vec<_> = std::fs::read_dir(&music)
        .expect("assets/music")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".txt").map(str::to_string))
        .collect();
    names.sort();
    let mut failed = false;
    for name in names {
        let text = std::fs::read_to_string(music.join(format!("{name}.txt"))).expect("song text");
        let song = match compose::parse_song(&text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{name}.txt: {e}");
                failed = true;
                continue;
            }
        };
        let xm = compose::write_xm(&song);
        let path = music.join(format!("{name}.xm"));
        if check {
            if std::fs::read(&path).ok().as_deref() != Some(&xm[..]) {
                eprintln!("{name}.xm differs from what {name}.txt makes: run `make music`");
                failed = true;
            }
        } else {
            std::fs::write(&path, &xm).expect("write xm");
        }
        let mut line = compose::stats(&name, &song);
        if preview {
            let out = root.join("target/music");
            std::fs::create_dir_all(&out).expect("target/music");
            let passes = if song.loops { 2 } else { 1 };
            let mix = compose::render(&song, passes);
            let peak = mix.iter().fold(0f32, |m, s| m.max(s.abs()));
            let rms = (mix.iter().map(|s| (s * s) as f64).sum::<f64>() / mix.len().max(1) as f64).sqrt();
            // 8-bit units summed: 256 x 128 = 32768 would be one channel at full scale; 64 leaves 4 channels' room.
            std::fs::write(out.join(format!("{name}.wav")), compose::wav(&mix, 64.0)).expect("write wav");
            line += &format!(", mix peak {peak:.0} rms {rms:.1} (8-bit units)");
        }
        println!("{line}");
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
