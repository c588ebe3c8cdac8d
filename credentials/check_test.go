package credentials_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

func TestCheckQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		query    url.Values
		wantName string // "" means accepted
	}{
		{"nil", nil, ""},
		{"ordinary parameters", url.Values{"limit": {"10"}, "page_token": {"abc"}, "bbox": {"1,2,3,4"}}, ""},
		{"one credential", url.Values{"limit": {"10"}, "api_key": {secret}}, "api_key"},
		{"first in sorted order", url.Values{"token": {secret}, "Password": {secret}, "q": {"x"}}, "Password"},
		{"credential without a value", url.Values{"auth": nil}, "auth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := credentials.CheckQuery(tt.query)
			if tt.wantName == "" {
				if err != nil {
					t.Fatalf("CheckQuery() = %v, want nil", err)
				}
				return
			}
			var ce *credentials.CredentialParamError
			if !errors.As(err, &ce) {
				t.Fatalf("CheckQuery() = %v, want a *CredentialParamError", err)
			}
			if ce.Name != tt.wantName {
				t.Errorf("Name = %q, want %q", ce.Name, tt.wantName)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantName) || !strings.Contains(msg, "credentials.Key") {
				t.Errorf("message %q should name the parameter and point at credentials.Key", msg)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("message %q quotes the value", msg)
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	if err := credentials.CheckName("cursor"); err != nil {
		t.Errorf("CheckName(cursor) = %v, want nil", err)
	}
	var ce *credentials.CredentialParamError
	if err := credentials.CheckName("X-Api-Key"); !errors.As(err, &ce) || ce.Name != "X-Api-Key" {
		t.Errorf("CheckName(X-Api-Key) = %v, want a *CredentialParamError naming it", err)
	}
}
