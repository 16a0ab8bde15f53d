module hcashare-helm-render

go 1.19
