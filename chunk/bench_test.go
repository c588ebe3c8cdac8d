package chunk_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/steadyhttp/steady/chunk"
)

// BenchmarkPlan2000 plans 2,000 eight-digit site numbers into 8,000-byte URLs.
func BenchmarkPlan2000(b *testing.B) {
	base, err := url.Parse("https://waterservices.example.gov/nwis/dv/?format=json&parameterCd=00060&startDT=1996-01-01&endDT=2025-12-31")
	if err != nil {
		b.Fatal(err)
	}
	sites := make([]string, 2000)
	for i := range sites {
		sites[i] = fmt.Sprintf("%08d", 1646500+i*37)
	}
	var urls []*url.URL
	for b.Loop() {
		urls, err = chunk.Plan(base, "sites", sites, 0)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(urls)), "urls")
}

// BenchmarkPlanMulti plans 2,000 sites against 20 parameter codes.
func BenchmarkPlanMulti(b *testing.B) {
	base, err := url.Parse("https://waterservices.example.gov/nwis/dv/?format=json")
	if err != nil {
		b.Fatal(err)
	}
	sites := make([]string, 2000)
	for i := range sites {
		sites[i] = fmt.Sprintf("%08d", 1646500+i*37)
	}
	codes := make([]string, 20)
	for i := range codes {
		codes[i] = fmt.Sprintf("%05d", 60+i)
	}
	var urls []*url.URL
	for b.Loop() {
		urls, err = chunk.PlanMulti(base, map[string][]string{"sites": sites, "parameterCd": codes}, chunk.Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(urls)), "urls")
}
