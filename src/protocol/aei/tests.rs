use super::*;

#[test]
fn short_boards_round_trip() {
    let g = Arimaa::new();
    let b = short_board(g.position());
    assert_eq!(b.len(), 66);
    assert!(b.starts_with("[rrrrrrrrdhcemchd        "));
    let (pos, _) = parse_position_line(&format!("g {b}")).unwrap();
    assert_eq!(&pos, g.position());
}

#[test]
fn turn_labels_are_stripped() {
    assert_eq!(strip_turn_label("12g Ed2n Ed3n"), "Ed2n Ed3n");
    assert_eq!(strip_turn_label("1w Ra1 Rb1"), "Ra1 Rb1");
    assert_eq!(strip_turn_label("s ra8 rb8"), "ra8 rb8");
    assert_eq!(strip_turn_label("Ed2n Ed3n"), "Ed2n Ed3n");
    assert_eq!(strip_turn_label("  Ra1 "), "Ra1");
}
