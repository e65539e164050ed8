//! The ARM hot paths in IWRAM, run on the GBA's CPU.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use stackshot_platform::cycles::Stopwatch;
use stackshot_platform::fast::fill_words;

#[test_case]
fn fill_words_writes_exactly_count_words() {
    for count in 0..=9 {
        let mut buffer = [0xAAAA_AAAAu32; 12];
        // SAFETY: words 1..1 + count (at most 10) lie inside the 12-word buffer.
        unsafe { fill_words(buffer.as_mut_ptr().add(1), 0x1234_5678, count) };
        for (i, &word) in buffer.iter().enumerate() {
            let expected = if (1..=count).contains(&i) { 0x1234_5678 } else { 0xAAAA_AAAA };
            assert_eq!(word, expected, "count {count}, word {i}");
        }
    }
}

#[test_case]
fn fill_words_beats_a_thumb_loop_in_rom() {
    let mut table = [0u32; 256];
    let watch = Stopwatch::start();
    // SAFETY: the table is 256 aligned words.
    unsafe { fill_words(table.as_mut_ptr(), 0x200, table.len()) };
    let arm = watch.elapsed();
    assert!(table.iter().all(|&w| w == 0x200));

    // The baseline, measured in the same run: a plain store loop compiled as Thumb and fetched from ROM.
    let watch = Stopwatch::start();
    for word in table.iter_mut() {
        // SAFETY: `word` is a valid, aligned element of `table`; volatile keeps the loop a loop.
        unsafe { core::ptr::write_volatile(word, 0x300) };
    }
    let thumb = watch.elapsed();
    assert!(table.iter().all(|&w| w == 0x300));
    stackshot_platform::info!("fill of 256 words: ARM/IWRAM {arm} cycles, Thumb/ROM loop {thumb} cycles");
    assert!(arm * 2 < thumb, "the IWRAM fill ({arm} cycles) should be over twice as fast as Thumb in ROM ({thumb})");
}
