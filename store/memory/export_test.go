package memory

// NewWithRandomTies returns an empty Store that claims jobs due at the same
// instant in a random order, which the Store contract allows.
func NewWithRandomTies() *Store {
	s := New()
	s.randomTies = true
	return s
}
