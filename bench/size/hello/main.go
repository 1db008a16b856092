// Command hello is the smallest Go program, the floor of the binary sizes
// reported by the size benchmark.
package main

import "fmt"

func main() { fmt.Println("hello, world") }
