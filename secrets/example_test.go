package secrets_test

import (
	"fmt"

	"github.com/jobclock/scheduler/secrets"
)

// A keyring seals with its first key and opens with any of its keys, so a
// value sealed before a rotation still opens after it.
func ExampleKeyring() {
	old, _, _ := secrets.GenerateKey()
	sealed, _ := must(secrets.NewKeyring(old)).Seal("hunter2", "reports/nightly#action.request.authentication.password")

	cur, _, _ := secrets.GenerateKey()
	ring := must(secrets.NewKeyring(cur, old)) // cur seals, both open
	plain, err := ring.Open(sealed, "reports/nightly#action.request.authentication.password")
	fmt.Println(plain, err)
	_, err = ring.Open(sealed, "reports/other#action.request.authentication.password")
	fmt.Println(err)
	// Output:
	// hunter2 <nil>
	// secrets: the sealed value does not open (altered, or sealed for another job or field)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
