// placeholder: replaced by the policy core
