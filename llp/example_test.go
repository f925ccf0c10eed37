package llp_test

import (
	"fmt"
	"math/rand/v2"

	"labelprivacy/llp"
)

func ExamplePartition() {
	// 10 rows in bags of 3, seeded; the remainder row is kept as a bag of 1.
	bags, err := llp.Partition(10, 3, rand.NewPCG(1, 2), true)
	if err != nil {
		panic(err)
	}
	for b := range bags.NumBags {
		fmt.Println(b, bags.Size(b), bags.Members(b))
	}
	fmt.Println("dropped:", bags.Dropped)
	// Output:
	// 0 3 [2 4 3]
	// 1 3 [9 0 1]
	// 2 3 [8 6 5]
	// 3 1 [7]
	// dropped: 0
}

func ExampleSorted() {
	// 7 rows sorted by one feature into bags of 3; the row with the largest
	// value is the remainder, kept as a bag of 1.
	x := []float32{0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 2.0}
	bags, err := llp.Sorted{Feature: "x", Values: x}.Partition(len(x), 3, rand.NewPCG(1, 2), true)
	if err != nil {
		panic(err)
	}
	for b := range bags.NumBags {
		fmt.Println(b, bags.Members(b))
	}
	// Output:
	// 0 [1 5 3]
	// 1 [2 4 0]
	// 2 [6]
}

func ExampleKeyed() {
	// Bags of 2 within campaigns (key order: 3, then 7); one of campaign 7's
	// three rows is left over and dropped.
	campaign := []int64{7, 3, 7, 3, 7}
	bags, err := llp.Keyed{Column: "campaign", Keys: campaign}.Partition(len(campaign), 2, rand.NewPCG(1, 2), false)
	if err != nil {
		panic(err)
	}
	for b := range bags.NumBags {
		fmt.Println(b, bags.Members(b))
	}
	fmt.Println("dropped:", bags.Dropped)
	// Output:
	// 0 [1 3]
	// 1 [0 4]
	// dropped: 1
}
